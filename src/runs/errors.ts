/**
 * The run service's refusals, in its own terms: it is shutting down, a session stays busy, a run
 * does not exist, is not running, or its events after a cursor are not kept any more. The run
 * service knows nothing of HTTP; the HTTP edge maps each kind onto its status and code
 * (src/http/kit/errors.ts, docs/errors.md).
 */

/** What kind of refusal a `RunServiceError` is. */
export type RunServiceErrorKind =
  | "shutting_down"
  | "at_capacity"
  | "tenant_limit"
  | "session_busy"
  | "run_not_found"
  | "run_not_running"
  | "events_gone";

/** A request the run service refuses. */
export class RunServiceError extends Error {
  /** What was refused. */
  readonly kind: RunServiceErrorKind;
  /** The run (or, for `session_busy`, the session) concerned; empty for `shutting_down`. */
  readonly id: string;
  /**
   * `run_not_running`: the run's status; `events_gone`: why they are gone; `at_capacity`: what is
   * at its bound when it is not the runs; otherwise empty.
   */
  readonly detail: string;

  /** A refusal of `kind` about `id`, with its `detail`. */
  constructor(kind: RunServiceErrorKind, message: string, id = "", detail = "") {
    super(message);
    this.name = "RunServiceError";
    this.kind = kind;
    this.id = id;
    this.detail = detail;
  }
}

/** Constructors of every `RunServiceError` the run service throws. */
export const runServiceErrors = {
  shuttingDown: () =>
    new RunServiceError("shutting_down", "the server is shutting down and accepts no new runs"),
  /**
   * An attached run while this replica executes `runtime.runs.max_concurrent` runs; with
   * `detail`, what else is at its bound (streams replaying large events).
   */
  atCapacity: (detail = "") =>
    new RunServiceError(
      "at_capacity",
      detail || "this replica runs as many runs as it may",
      "",
      detail,
    ),
  /** A start beyond the tenant's `tenant_max_runs` or `tenant_max_queued` (said in `message`). */
  tenantLimit: (tenant: string, message: string) =>
    new RunServiceError("tenant_limit", message, tenant),
  /** The session's conversation kept changing under the start (or another run holds it). */
  sessionBusy: (id: string) =>
    new RunServiceError("session_busy", `session '${id}' already has a running run`, id),
  runNotFound: (id: string) => new RunServiceError("run_not_found", `run '${id}' not found`, id),
  runNotRunning: (id: string, status: string) =>
    new RunServiceError("run_not_running", `run '${id}' is ${status}, not running`, id, status),
  eventsGone: (id: string, why: string) =>
    new RunServiceError(
      "events_gone",
      `the events of run '${id}' after this cursor are not retained (${why})`,
      id,
      why,
    ),
} as const;
