/**
 * The Store seam: everything durable (sessions, messages, runs, checkpoints), tenant-scoped.
 * Two implementations: SQLite (`node:sqlite`, the embedded default) and PostgreSQL (`postgres`).
 * Both pass the one contract suite in tests/store/contract.ts. Client mistakes are thrown as
 * `StoreError`s (./errors.ts), never as HTTP errors.
 */
import type { CheckpointMethods } from "./types/checkpoints.ts";
import type { ClientGoneMethods, LeaseMethods } from "./types/leases.ts";
import type { ChainMethods, RunMethods, RunStepMethods } from "./types/runs.ts";
import type { MessageMethods, SessionMethods } from "./types/sessions.ts";

export type { PageQuery } from "./types/page.ts";
export type { MessageMethods, SessionMethods } from "./types/sessions.ts";
export type { CheckpointData, CheckpointHead, CheckpointMethods } from "./types/checkpoints.ts";
export type {
  ChainedRun,
  ChainFilter,
  ChainHead,
  ChainMethods,
  NewRun,
  QueuedRun,
  QueuedStart,
  RunChain,
  RunFilter,
  RunMethods,
  RunOutcome,
  RunStart,
  RunStepMethods,
  StepCommit,
} from "./types/runs.ts";
export type {
  Claimed,
  ClaimedRun,
  ClientGoneMethods,
  LeaseMethods,
  LostRun,
  QueuedClaim,
} from "./types/leases.ts";

/**
 * Durable storage of sessions, messages, runs and checkpoints: the methods of each concern are
 * in ./types/ (each implementation builds its store from such parts).
 */
export interface Store
  extends
    SessionMethods,
    MessageMethods,
    RunMethods,
    RunStepMethods,
    ChainMethods,
    LeaseMethods,
    ClientGoneMethods,
    CheckpointMethods {
  /** `sqlite` or `postgres`. */
  readonly kind: "sqlite" | "postgres";
  /**
   * Runs the versioned migrations (idempotent; safe when two replicas start at once); resolves
   * with the ones this call applied, as `0005_durable_run_commits`.
   */
  migrate(): Promise<readonly string[]>;
  /** Resolves when the store answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Releases connections and file handles. */
  close(): Promise<void>;
}
