/**
 * The store's own errors: what went wrong in storage terms (a record is missing, an id is taken, a
 * session is busy, a page cursor is not ours, the conversation moved under a run's plan). The
 * store knows nothing of HTTP; the HTTP edge maps each kind onto its status and code
 * (src/http/kit/errors.ts, docs/errors.md).
 */

/** What kind of storage failure a `StoreError` is. */
export type StoreErrorKind =
  | "session_not_found"
  | "run_not_found"
  | "checkpoint_not_found"
  | "session_exists"
  | "run_exists"
  | "message_exists"
  | "session_busy"
  | "invalid_cursor";

/** A failure of a store call a client caused (a missing record, a taken id, a busy session). */
export class StoreError extends Error {
  /** What failed. */
  readonly kind: StoreErrorKind;
  /** The id of the record concerned (empty for `invalid_cursor`). */
  readonly id: string;

  /** An error of `kind` about the record `id`. */
  constructor(kind: StoreErrorKind, id: string, message: string) {
    super(message);
    this.name = "StoreError";
    this.kind = kind;
    this.id = id;
  }
}

/**
 * The store could not be reached or did not answer in time (the database is down, restarting,
 * paused or overloaded): nobody's mistake, and worth retrying. The HTTP edge answers it 503 with
 * `Retry-After`; a run that meets it fails with `store_unavailable`.
 */
export class StoreUnavailable extends Error {
  /** The Store method that failed. */
  readonly method: string;

  /** The failure of `method`, and why (the cause kept). */
  constructor(method: string, why: string, options?: { cause?: unknown }) {
    super(`the store is unavailable (${method}: ${why})`, options);
    this.name = "StoreUnavailable";
    this.method = method;
  }
}

/**
 * The session's conversation changed between `readStart` and `createRun` (a message was added or
 * deleted meanwhile): nothing was written; read again and retry.
 */
export class ConversationChanged extends Error {
  /** Names the session whose conversation moved. */
  constructor(readonly sessionId: string) {
    super(`the conversation of session '${sessionId}' changed while the run was being started`);
    this.name = "ConversationChanged";
  }
}

/**
 * A write of a run refused: the attempt that made it no longer owns the run (another replica
 * took it over after its lease ran out, or the run ended). The writer stops that run's work.
 */
export class RunFenced extends Error {
  /** The run and the attempt whose write was refused. */
  constructor(readonly runId: string, readonly attempt: number) {
    super(`run '${runId}': attempt ${attempt} no longer owns the run`);
    this.name = "RunFenced";
  }
}

/** Constructors of every `StoreError` the stores throw. */
export const storeErrors = {
  sessionNotFound: (id: string) =>
    new StoreError("session_not_found", id, `session '${id}' not found`),
  runNotFound: (id: string) => new StoreError("run_not_found", id, `run '${id}' not found`),
  checkpointNotFound: (id: string) =>
    new StoreError("checkpoint_not_found", id, `checkpoint '${id}' not found`),
  sessionExists: (id: string) =>
    new StoreError("session_exists", id, `session '${id}' already exists`),
  runExists: (id: string) => new StoreError("run_exists", id, `run '${id}' already exists`),
  messageExists: (id: string) =>
    new StoreError("message_exists", id, `message '${id}' already exists`),
  sessionBusy: (id: string) =>
    new StoreError("session_busy", id, `session '${id}' already has a running run`),
  invalidCursor: () =>
    new StoreError("invalid_cursor", "", "not a cursor returned as next_page by this list"),
} as const;
