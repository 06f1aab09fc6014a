/**
 * The re-attach grace of `on_disconnect = "cancel"`: an attached run whose client went away (its
 * connection dropped, or its replica was lost and this replica resumed the run) is cancelled only
 * if no client re-attaches (any replica, any protocol) within `runtime.attached.reattach_grace`.
 * The mark lives on the run's row (`Store.clientGone`), so a re-attach on another replica clears
 * it; the replica that marked it keeps the timer and cancels through the store only while a mark
 * at least a grace old is still there (a queued run is executed nowhere yet; a run another
 * replica resumed meanwhile was marked again by it, with a grace of its own). A grace of 0
 * cancels at once, as the spec's rule reads.
 */
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";

/** What the grace needs from the run service. */
export interface ClientGraceDeps {
  store: Pick<Store, "clientGone" | "cancelIfClientGone" | "cancelRun">;
  log: Logger;
  /** Milliseconds a client has to re-attach (manifest `runtime.attached.reattach_grace`). */
  graceMs: number;
  /** Aborts the run if this replica executes it, once the grace cancelled it. */
  cancelled: (runId: string) => void;
}

/** The timers of the runs whose attached client went away from this replica. */
export class ClientGrace {
  readonly #deps: ClientGraceDeps;
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();

  /** The grace kept with `deps`. */
  constructor(deps: ClientGraceDeps) {
    this.#deps = deps;
  }

  /**
   * The attached client of a run went away (here, or with the replica of the attempt this one
   * resumed): cancel the run unless a client returns.
   * Never rejects: a store that cannot be reached is logged, and the run goes on.
   */
  async gone(tenant: string, runId: string): Promise<void> {
    const { store, graceMs, log } = this.#deps;
    try {
      if (graceMs === 0) {
        await store.cancelRun(tenant, runId);
        this.#deps.cancelled(runId);
        return;
      }
      if (!(await store.clientGone(runId))) return;
    } catch (err) {
      log.warn("could not act on a client that went away", { run_id: runId, error: String(err) });
      return;
    }
    log.info("run waits for its client to re-attach", { tenant, run_id: runId, grace: graceMs });
    this.#arm(tenant, runId);
  }

  /** Clears every timer (shutdown: the runs' next owners arm their own). */
  close(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #arm(tenant: string, runId: string): void {
    clearTimeout(this.#timers.get(runId));
    const timer = setTimeout(() => void this.#expire(tenant, runId), this.#deps.graceMs);
    Deno.unrefTimer(timer);
    this.#timers.set(runId, timer);
  }

  async #expire(tenant: string, runId: string): Promise<void> {
    this.#timers.delete(runId);
    const { store, log, graceMs } = this.#deps;
    try {
      if (!(await store.cancelIfClientGone(runId, graceMs))) return;
    } catch (err) {
      // The store could not answer: ask again after another grace.
      log.warn("could not cancel a run its client left", { run_id: runId, error: String(err) });
      this.#arm(tenant, runId);
      return;
    }
    log.info("run cancelled: no client re-attached within the grace", { tenant, run_id: runId });
    this.#deps.cancelled(runId);
  }
}
