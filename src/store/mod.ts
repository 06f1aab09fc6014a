/**
 * The storage layer's public surface: `openStore` picks the implementation from the options,
 * opens it and runs the migrations, so callers get a ready `Store`.
 */
import { boundedStore } from "./bounded.ts";
import type { Store } from "./types.ts";
import type { Clock } from "../clock.ts";

export type {
  ChainedRun,
  ChainFilter,
  ChainHead,
  ChainMethods,
  CheckpointData,
  CheckpointHead,
  CheckpointMethods,
  Claimed,
  ClaimedRun,
  ClientGoneMethods,
  LeaseMethods,
  LostRun,
  MessageMethods,
  NewRun,
  PageQuery,
  QueuedClaim,
  QueuedRun,
  QueuedStart,
  RunChain,
  RunFilter,
  RunMethods,
  RunOutcome,
  RunStart,
  RunStepMethods,
  SessionMethods,
  StepCommit,
  Store,
} from "./types.ts";
export { newMessages, replicaLostError } from "./records.ts";
export { decodeCursor, encodeCursor } from "./cursor.ts";
export {
  ConversationChanged,
  RunFenced,
  StoreError,
  type StoreErrorKind,
  StoreUnavailable,
} from "./errors.ts";

/** Where the store lives: a SQLite file (or `:memory:`) or a PostgreSQL database and schema. */
export type StoreOptions =
  & ({ kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema?: string })
  & {
    /** The time written into records (default the real time; tests move it on). */
    clock?: Clock;
    /**
     * Milliseconds any call may take (connecting, waiting for a lock, the query) before it
     * fails as `StoreUnavailable`; default 5000.
     */
    timeoutMs?: number;
    /** Told the migrations the opening applied (`0005_durable_run_commits`). */
    onMigrated?: (applied: readonly string[]) => void;
    /**
     * Background work (SQLite's checkpoint worker) starts a second after this resolves, at once
     * without it: a server resolves it once listening, so that work stays off its first requests.
     */
    background?: Promise<void>;
  };

/**
 * Opens the store the options name and brings its schema up to date. Rejects when the database
 * cannot be reached or migrated (nothing stays open then). Every call of the store it returns
 * settles within `timeoutMs`, and an unreachable database is `StoreUnavailable`.
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? 5000;
  // Each implementation is loaded only when named: a SQLite deployment loads no PostgreSQL driver
  // and the other way round (start-up time, docs/deploy.md).
  switch (options.kind) {
    case "sqlite": {
      const { isSqliteOutage, openSqliteStore } = await import("./sqlite/mod.ts");
      return boundedStore(
        await openSqliteStore({
          path: options.path,
          clock: options.clock,
          busyTimeoutMs: timeoutMs,
          onMigrated: options.onMigrated,
          background: options.background,
        }),
        { timeoutMs, isOutage: isSqliteOutage },
      );
    }
    case "postgres": {
      const { isPostgresOutage, openPostgresStore } = await import("./postgres/mod.ts");
      return boundedStore(
        await openPostgresStore({
          url: options.url,
          schema: options.schema,
          clock: options.clock,
          connectTimeoutMs: timeoutMs,
          onMigrated: options.onMigrated,
        }),
        { timeoutMs, isOutage: isPostgresOutage },
      );
    }
  }
}
