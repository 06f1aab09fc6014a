/**
 * Attempts: what the run service does when a run changes hands. A claimed run is planned again
 * from the request kept on its row and executed as a new attempt (`resumedRequest`,
 * `resumedActive`); a run this replica hands over at shutdown or loses to another attempt
 * (fencing) ends here without a word more (`passOn`).
 */
import type { RunRequest } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { ClaimedRun, Store } from "../store/mod.ts";
import { type ActiveRun, newActiveRun } from "./active.ts";
import type { Delivery } from "./delivery.ts";

/**
 * The request a claimed run is planned again from: the one kept on its row, without input (it
 * is in the conversation), resume payload or fork (applied at the start), and without the
 * request's context once a checkpoint of the run holds a newer one.
 */
export function resumedRequest(claimed: ClaimedRun): RunRequest {
  const stored = (claimed.request ?? {}) as Partial<RunRequest>;
  return {
    ...stored,
    session_id: claimed.session_id,
    run_id: claimed.run_id,
    messages: [],
    resume_payload: null,
    checkpoint_id: null,
    ...(claimed.checkpoint_id ? { context: null } : {}),
  };
}

/** The active run of a claimed run's new attempt: detached (clients re-attach by cursor). */
export function resumedActive(claimed: ClaimedRun): ActiveRun {
  // Messages may have been sent to it (steer) while it waited or was lost: it looks at once.
  return { ...newActiveRun(claimed, claimed.attempt), steered: true };
}

/** Whether the run goes on as another attempt (handed over or fenced), not here. */
export function passedOn(active: ActiveRun): boolean {
  return active.reason === "handoff" || active.reason === "fenced";
}

/**
 * Ends this replica's part in a run another attempt goes on with: a hand-over releases the run
 * (after its events so far are in its history, so the next attempt numbers after them); the
 * attached client's stream ends with `transport_lost` (it re-attaches with its cursor).
 */
export async function passOn(
  deps: { store: Store; delivery: Delivery; log: Logger },
  active: ActiveRun,
): Promise<void> {
  const { store, delivery, log } = deps;
  if (active.reason === "handoff") {
    // Not paused but stopping: what it said before the hand-over goes out first.
    active.leaseAt = performance.now();
    await delivery.flush();
    const released = await store.releaseRun(active.run_id, active.attempt).catch((err) => {
      log.warn("could not release run: it is resumed once its lease runs out", {
        run_id: active.run_id,
        error: String(err),
      });
      return false;
    });
    log.info("run handed over", {
      tenant: active.tenant,
      run_id: active.run_id,
      session_id: active.session_id,
      attempt: active.attempt,
      reason: "handoff",
      released,
    });
  } else {
    log.warn("run stopped: another attempt owns it", {
      tenant: active.tenant,
      run_id: active.run_id,
      attempt: active.attempt,
    });
  }
  active.attached?.end({ notice: "transport_lost" });
}
