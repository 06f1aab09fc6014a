/**
 * The Store seam: everything durable (sessions, messages, runs, checkpoints), tenant-scoped.
 * Two implementations: SQLite (`node:sqlite`, the embedded default) and PostgreSQL (`postgres`).
 * Both pass the one contract suite in tests/store/contract.ts. Client mistakes are thrown as
 * `StoreError`s (./errors.ts), never as HTTP errors.
 */
import type {
  Checkpoint,
  CheckpointState,
  Message,
  MessageInput,
  Page,
  Run,
  RunError,
  RunStatus,
  Session,
} from "../api/schemas.ts";

/** Paging of a list call: page size and the opaque cursor from a previous page. */
export interface PageQuery {
  per_page: number;
  /** `next_page` of the previous page; one the store cannot decode is `invalid_cursor`. */
  page?: string | null;
}

/** Filters of `GET /v1/sessions/{id}/runs`; times are epoch milliseconds. */
export interface RunFilter {
  ids?: string[];
  session_ids?: string[];
  statuses?: RunStatus[];
  created_before?: number;
  created_after?: number;
  updated_before?: number;
  updated_after?: number;
}

/** What a new run row holds. */
export interface NewRun {
  run_id: string;
  session_id: string;
  parent_checkpoint_id: string | null;
  /** Replica id of the process that executes the run. */
  owner: string;
  /**
   * Create the session when it does not exist, in the run's transaction: a refused run (409)
   * leaves no session behind.
   */
  create_session?: boolean;
}

/** The terminal outcome of a run. */
export interface RunOutcome {
  status: Exclude<RunStatus, "running">;
  result?: unknown;
  interrupt_payload?: Record<string, unknown> | null;
  error?: RunError | null;
}

/** What a new checkpoint row holds. */
export interface NewCheckpoint {
  session_id: string;
  run_id: string | null;
  parent_id: string | null;
  state: CheckpointState;
}

/** A run whose owner stopped heartbeating, as returned by the sweeper. */
export interface LostRun {
  tenant_id: string;
  run_id: string;
  session_id: string;
  owner: string;
}

/** Durable storage of sessions, messages, runs and checkpoints. */
export interface Store {
  /** `sqlite` or `postgres`. */
  readonly kind: "sqlite" | "postgres";
  /** Runs the versioned migrations (idempotent; safe when two replicas start at once). */
  migrate(): Promise<void>;
  /** Resolves when the store answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Releases connections and file handles. */
  close(): Promise<void>;

  // Sessions
  /** Creates a session; `StoreError` `session_exists` when the id exists in the tenant. */
  createSession(
    tenant: string,
    input: { session_id?: string | null; metadata?: Record<string, unknown> | null },
  ): Promise<Session>;
  getSession(tenant: string, sessionId: string): Promise<Session | null>;
  listSessions(tenant: string, page: PageQuery): Promise<Page<Session>>;
  /**
   * Deletes a session with its messages, runs and checkpoints. `StoreError` `session_not_found`
   * when absent, `session_busy` while one of its runs is running.
   */
  deleteSession(tenant: string, sessionId: string): Promise<void>;

  // Messages (the session's current conversation, in order)
  /**
   * Appends messages to an existing session (`session_not_found` otherwise), generating missing
   * ids; a `message_id` already used in the session is `message_exists`. While a run other than
   * `runId` is running in the session it is `session_busy`: the check and the write are one
   * transaction, so a run starting meanwhile cannot slip between them.
   */
  appendMessages(
    tenant: string,
    sessionId: string,
    messages: MessageInput[],
    runId?: string | null,
  ): Promise<Message[]>;
  listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>>;
  /** The whole conversation of a session, oldest first. */
  allMessages(tenant: string, sessionId: string): Promise<Message[]>;
  getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null>;
  /**
   * True when a message was deleted; `session_busy` (checked in the transaction) while a run is
   * running.
   */
  deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean>;
  /**
   * Makes `messages` the session's conversation (used when a run forks from an earlier
   * checkpoint): rows not in the list are removed, the listed ones kept or restored in order.
   */
  replaceMessages(tenant: string, sessionId: string, messages: Message[]): Promise<void>;

  // Runs
  /**
   * Inserts a running run; the session must exist unless `create_session`. `StoreError`
   * `run_exists` when the run id exists (in any tenant), `session_busy` when the session already
   * has a running run.
   */
  createRun(tenant: string, run: NewRun): Promise<Run>;
  getRun(tenant: string, runId: string): Promise<Run | null>;
  listRuns(
    tenant: string,
    sessionId: string,
    filter: RunFilter,
    page: PageQuery,
  ): Promise<Page<Run>>;
  /**
   * Moves a running run to its outcome (compare-and-set on `running`). Returns the updated run,
   * or the unchanged run when it was no longer running (cancelled or swept meanwhile).
   */
  finishRun(runId: string, outcome: RunOutcome): Promise<Run>;
  /**
   * Cancels a running run of the tenant (no change when terminal). Returns the run after the
   * call, or null when the tenant has no such run.
   */
  cancelRun(tenant: string, runId: string): Promise<Run | null>;
  /**
   * Calls `listener` with the id of every run cancelled from now on as soon as the store learns of
   * it (PostgreSQL: LISTEN/NOTIFY sent by `cancelRun`). SQLite has no push: it returns at once and
   * never calls; the run service's polling of `runStatuses` covers it. Resolves to an unsubscribe.
   */
  watchCancellations(listener: (runId: string) => void): Promise<() => Promise<void>>;
  /** Statuses of the given runs (any tenant), for the owner's cancellation watch. */
  runStatuses(runIds: string[]): Promise<Map<string, RunStatus>>;
  /** Refreshes the heartbeat of the runs this owner executes. */
  heartbeat(owner: string, runIds: string[]): Promise<void>;
  /**
   * Marks `interrupted` every running run whose heartbeat is older than `now - leaseMs` and
   * returns them; the error says the replica was lost.
   */
  sweepLostRuns(now: number, leaseMs: number): Promise<LostRun[]>;

  // Checkpoints
  /**
   * Saves a checkpoint; with a `run_id` it also becomes that run's `checkpoint_id` (and moves the
   * run's `updated_at`) in the same transaction.
   */
  addCheckpoint(tenant: string, checkpoint: NewCheckpoint): Promise<Checkpoint>;
  getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null>;
  /** The most recently created checkpoint of the session. */
  latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null>;
  listCheckpoints(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Checkpoint>>;
}
