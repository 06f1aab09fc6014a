/**
 * A run this replica executes, as the run service's parts share it: the lifecycle creates and
 * ends it, delivery numbers and sends its events, the leases abort it.
 */
import type { EndNotice, SequencedEvent } from "../api/events.ts";
import type { StepCommit } from "../store/mod.ts";
import type { AsyncQueue } from "./queue.ts";

/**
 * Why the service aborted a run it executes: a cancellation; a hand-over at shutdown (the run
 * goes on as another attempt); or fencing (another attempt took it over already).
 */
export type AbortReason = "cancelled" | "handoff" | "fenced";

/** One run executing on this replica, from its start until its outcome is delivered. */
export interface ActiveRun {
  /** The run's tenant. */
  tenant: string;
  /** The run. */
  run_id: string;
  /** The run's session. */
  session_id: string;
  /** The attempt executing it here: every write carries it (fencing). */
  attempt: number;
  /**
   * `performance.now()` when this replica last knew it owned the run (its start or claim, a
   * heartbeat): a replica that has not for most of a lease (it was paused) holds the run's events
   * back until a heartbeat says it still owns it (see `Delivery.flush`).
   */
  leaseAt: number;
  /** Aborts the engine (its model stream and tools) through one signal. */
  controller: AbortController;
  /** Why the service aborted it, when it did. */
  reason?: AbortReason;
  /** The attached stream's queue, until the run ends or drops a client that reads too slowly. */
  attached?: AsyncQueue<SequencedEvent | EndNotice>;
  /** Settles once the run's outcome is saved and delivered. */
  done: Promise<void>;
  /** The sequence number of the last event delivered. */
  seq: number;
  /** The timestamp of the last event delivered: timestamps never go backwards within a run. */
  timestamp: number;
  /**
   * Resolves once this attempt's first events are in the run's history (at once for an attempt
   * that continues a history, and for a fenced one, which sends none): the run's outcome is saved
   * only then, so a run the store says ended always has a past to replay.
   */
  recorded: PromiseWithResolvers<void>;
  /** The engine's last step, committed with the outcome. */
  last: StepCommit | null;
  /** The origin of the chain the run continues, if it continues one. */
  chain?: string;
  /** `performance.now()` at start, for the duration in the "run finished" log line. */
  started: number;
  /**
   * A steer of the run was heard (steering.ts): messages may wait in its inbox; the engine looks
   * at its next step boundary.
   */
  steered: boolean;
}

/**
 * A run this replica begins executing now as `attempt`: nothing delivered yet, its lease
 * confirmed now; `more` its attached stream's queue and its chain, when it has them.
 */
export function newActiveRun(
  run: { tenant_id: string; run_id: string; session_id: string },
  attempt: number,
  more: Pick<ActiveRun, "attached" | "chain"> = {},
): ActiveRun {
  const now = performance.now();
  return {
    tenant: run.tenant_id,
    run_id: run.run_id,
    session_id: run.session_id,
    attempt,
    leaseAt: now,
    controller: new AbortController(),
    done: Promise.resolve(),
    last: null,
    started: now,
    seq: 0,
    timestamp: 0,
    recorded: Promise.withResolvers<void>(),
    steered: false,
    ...more,
  };
}
