/**
 * What a failed run reports as its `error`: a model's failure as the model said it, an
 * unavailable store as `store_unavailable`, output past the session cap as `session_too_large`,
 * anything else as `internal_error` — logged, never
 * shown (its details could carry internals).
 */
import type { RunError } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import { ModelError } from "../models/mod.ts";
import { StoreUnavailable } from "../store/mod.ts";
import { SessionFull } from "./size.ts";

/** The run error of `error`, which ended a run that was not cancelled; logged when unexpected. */
export function runErrorOf(error: unknown, log: Logger): RunError {
  if (error instanceof ModelError) {
    return {
      code: error.code,
      message: error.message,
      provider: error.provider,
      model: error.model,
      attempts: error.attempts,
    };
  }
  if (error instanceof StoreUnavailable) {
    // An outage, not a bug: the run cannot save its steps, so it stops where it last saved.
    log.warn("run failed: the store is unavailable", { error: error.message });
    return {
      code: "store_unavailable",
      message: "the store could not be reached during the run; its last saved step is kept",
    };
  }
  if (error instanceof SessionFull) {
    log.warn("run failed: its output would pass the session's cap");
    return { code: "session_too_large", message: error.message };
  }
  log.error("run failed with an internal error", { error: errorDetail(error) });
  return internalError();
}

/** The error of a run that failed inside agentd (a bug, or its last writes failing). */
export function internalError(): RunError {
  return { code: "internal_error", message: "the run failed with an internal error" };
}

/** An error for a log line: its stack when it has one (the logger scrubs secrets from it). */
export function errorDetail(error: unknown): string {
  return error instanceof Error ? error.stack ?? String(error) : String(error);
}
