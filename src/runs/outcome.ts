/**
 * A run's outcome: what its status, result and error are once the engine stopped (or the service
 * aborted it), and how it is saved with the engine's last step in one transaction, waiting out a
 * store that is unavailable.
 */
import { makeEvent, type RunEventOf } from "../api/events.ts";
import type { Run } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import { RunFenced, type RunOutcome, type Store, StoreUnavailable } from "../store/mod.ts";
import type { AbortReason, ActiveRun } from "./active.ts";

/**
 * The outcome of a run from the engine's `run_finished` (`final`; undefined when the engine
 * stopped without one) and why the service aborted it, if it did. A run handed over or fenced
 * has no outcome here (another attempt saves it); this is what is said should it be asked.
 */
export function outcomeOf(
  reason: AbortReason | undefined,
  final: RunEventOf<"run_finished"> | undefined,
): RunOutcome {
  if (!final || reason === "handoff" || reason === "fenced") {
    return {
      status: "failed",
      error: { code: "internal_error", message: "the run ended unexpectedly" },
    };
  }
  if (final.status === "running") {
    return { status: "failed", error: { code: "internal_error", message: "bad final status" } };
  }
  return {
    status: final.status,
    result: final.result ?? null,
    interrupt_payload: final.interrupt_payload,
    error: final.error ?? null,
  };
}

/** The `run_finished` event of a run record that has ended: what its clients are told of it. */
export function finishedOf(run: Run): RunEventOf<"run_finished"> {
  return makeEvent("run_finished", {
    session_id: run.session_id,
    run_id: run.run_id,
    status: run.status,
    interrupt_payload: run.interrupt_payload,
    result: run.result,
    error: run.error,
    usage: run.usage,
    finish_reason: run.finish_reason,
    cost: run.cost,
  });
}

/** What saving an outcome needs. */
export interface OutcomeDeps {
  store: Store;
  log: Logger;
  /** True once shutdown's grace is over: an unavailable store is not waited out any more. */
  givingUp: () => boolean;
}

/**
 * Saves the outcome, retrying while the store is unavailable: the client's final event is the
 * saved record, so it waits (the run stays active, heartbeats go on, so no other replica sweeps
 * it) until the store answers. Only when shutdown's grace is over does it stop retrying.
 */
export async function saveOutcome(
  deps: OutcomeDeps,
  active: ActiveRun,
  outcome: RunOutcome,
): Promise<Run> {
  for (let attempt = 0;; attempt++) {
    try {
      return await finish(deps, active, outcome);
    } catch (err) {
      if (!(err instanceof StoreUnavailable) || deps.givingUp()) throw err;
      if (attempt === 0) {
        deps.log.warn("store unavailable: the run's outcome is saved once it answers", {
          tenant: active.tenant,
          run_id: active.run_id,
          error: err.message,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 1000)));
    }
  }
}

/**
 * Commits the last step with the outcome. When the last step cannot be written (the session's
 * conversation belongs to another run by now, or a constraint refuses it), the run still ends:
 * `failed`, without that step.
 */
async function finish(deps: OutcomeDeps, active: ActiveRun, outcome: RunOutcome): Promise<Run> {
  const last = active.last;
  if (!last) return await deps.store.finishRun(active.run_id, outcome, null, active.attempt);
  try {
    const run = await deps.store.finishRun(active.run_id, outcome, last, active.attempt);
    active.last = null;
    return run;
  } catch (err) {
    // An outage is retried whole, the last step included (`saveOutcome`).
    if (err instanceof StoreUnavailable || err instanceof RunFenced) throw err;
    active.last = null;
    deps.log.error("could not save the last step of the run", {
      tenant: active.tenant,
      run_id: active.run_id,
      error: String(err),
    });
    return await deps.store.finishRun(
      active.run_id,
      {
        status: "failed",
        error: { code: "internal_error", message: "the run's last step could not be saved" },
      },
      null,
      active.attempt,
    );
  }
}
