/**
 * Leases: how replicas keep no zombie runs. This replica heartbeats the runs it executes, hears
 * cancellations (the store's watch, and a poll of its runs' statuses for a watch that missed
 * some), and sweeps the runs of replicas that stopped heartbeating for a whole lease: each is
 * recorded `interrupted` and its end delivered to its streams and its chain's followers.
 */
import { makeEvent } from "../api/events.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import type { LostRun, Store } from "../store/mod.ts";
import { announceLostToChain } from "./chains.ts";
import type { Delivery } from "./delivery.ts";

/** The timings of leases (manifest `runtime.replica`). */
export type ReplicaSettings = Config["manifest"]["runtime"]["replica"];

/** What leases need from the run service. */
export interface LeaseDeps {
  store: Store;
  pubsub: PubSub;
  /** Delivers the end of a swept run. */
  delivery: Delivery;
  /** This replica's id: the owner its heartbeats refresh. */
  replicaId: string;
  replica: ReplicaSettings;
  /** The time sweeps compare heartbeats with (the store's clock). */
  clock: Clock;
  log: Logger;
  /** The ids of the runs this replica executes now. */
  running: () => string[];
  /** Aborts a run of this replica that was cancelled, or has ended elsewhere. */
  abort: (runId: string) => void;
}

/** The heartbeat, the cancellation watch and poll, and the sweeper of one replica. */
export class Leases {
  readonly #deps: LeaseDeps;
  #timers: ReturnType<typeof setInterval>[] = [];
  #unwatch?: () => Promise<void>;
  #polling = false;
  #lastSweep = 0;
  /**
   * Since when (clock ms) every store call of the heartbeat and the poll succeeded; undefined
   * while the store fails. The sweeper waits for a whole lease of it (see `#poll`).
   */
  #reachableSince: number | undefined;

  /** Leases kept with `deps`; nothing runs before `open`. */
  constructor(deps: LeaseDeps) {
    this.#deps = deps;
  }

  /** Starts the cancellation watch, the heartbeat and the poll. */
  async open(): Promise<void> {
    const { store, replica, clock, log } = this.#deps;
    this.#unwatch = await store.watchCancellations(
      (runId) => this.#deps.abort(runId),
      () => {
        // Cancellations made while the watch was down were not heard: look once now.
        log.info("cancellation watch re-established");
        void this.#poll();
      },
    );
    this.#reachableSince = clock.now();
    this.#timers.push(setInterval(() => this.#heartbeat(), replica.heartbeat_interval));
    this.#timers.push(setInterval(() => this.#poll(), replica.poll_interval));
  }

  /** Stops the heartbeat, the poll and the watch. */
  async close(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    await this.#unwatch?.();
  }

  async #heartbeat(): Promise<void> {
    const running = this.#deps.running();
    if (running.length === 0) return;
    try {
      await this.#deps.store.heartbeat(this.#deps.replicaId, running);
      this.#reachableSince ??= this.#deps.clock.now();
    } catch (err) {
      this.#reachableSince = undefined;
      this.#deps.log.warn("heartbeat failed", { error: String(err) });
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    const { store, replica, clock } = this.#deps;
    try {
      const running = this.#deps.running();
      if (running.length > 0) {
        const statuses = await store.runStatuses(running);
        for (const [runId, status] of statuses) {
          if (status !== "running") this.#deps.abort(runId);
        }
      }
      // Cancellations need the fast poll; lost replicas only need noticing well within a lease.
      const now = clock.now();
      if (now - this.#lastSweep < replica.lease / 5) return;
      this.#lastSweep = now;
      this.#reachableSince ??= now;
      // After an outage every replica's heartbeats are stale, the live ones too: they get a lease
      // of a reachable store to heartbeat again before anything is swept.
      if (now - this.#reachableSince < replica.lease) return;
      const lost = await store.sweepLostRuns(now, replica.lease);
      for (const run of lost) await this.#endLost(run);
    } catch (err) {
      this.#reachableSince = undefined;
      this.#deps.log.warn("poll failed", { error: String(err) });
    } finally {
      this.#polling = false;
    }
  }

  /** Delivers the end of a run the sweep interrupted, to its streams and its chain's followers. */
  async #endLost(run: LostRun): Promise<void> {
    this.#deps.log.warn("run interrupted: its replica was lost", {
      tenant: run.tenant_id,
      run_id: run.run_id,
      session_id: run.session_id,
      owner: run.owner,
      status: "interrupted",
      reason: "replica_lost",
    });
    const event = makeEvent("run_finished", {
      session_id: run.session_id,
      run_id: run.run_id,
      status: "interrupted",
      interrupt_payload: null,
      result: null,
      error: {
        code: "replica_lost",
        message: `the replica executing this run stopped heartbeating (owner ${run.owner})`,
      },
    });
    const message = await this.#deps.delivery.endLost(run.run_id, event);
    // A run continuing a chain tells the chain's followers too.
    await announceLostToChain(this.#deps, run, message);
  }
}
