/**
 * Leases: how a run outlives its replica and never runs twice. This replica heartbeats the runs
 * it executes, each for its attempt (a run another attempt took over is reported fenced and
 * stopped here), hears cancellations (the store's watch, and a poll of its runs' statuses for a
 * watch that missed some), and claims the runs of replicas that stopped heartbeating for a whole
 * lease (or handed them over): each goes on here as its next attempt, from its last checkpoint;
 * one out of attempts is recorded `failed` and its end delivered to its streams and followers.
 */
import { makeEvent } from "../api/events.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import { type ClaimedRun, type LostRun, replicaLostError, type Store } from "../store/mod.ts";
import { announceLostToChain } from "./chains.ts";
import type { Delivery } from "./delivery.ts";

/** The timings of leases (manifest `runtime.replica`). */
export type ReplicaSettings = Config["manifest"]["runtime"]["replica"];

/** How many lost runs one sweep claims at most. */
const CLAIM_BATCH = 32;

/** What leases need from the run service. */
export interface LeaseDeps {
  store: Store;
  pubsub: PubSub;
  /** Delivers the end of a run the sweep failed (out of attempts). */
  delivery: Delivery;
  /** This replica's id: the owner its heartbeats refresh. */
  replicaId: string;
  replica: ReplicaSettings;
  /** Attempts a run gets (manifest `runtime.runs.max_attempts`). */
  maxAttempts: number;
  /**
   * False when another run service of this process still executes its runs on the same SQLite
   * store (the dev loop's previous agent): opening then claims nothing.
   */
  claimAtOpen?: boolean;
  /** The time sweeps compare heartbeats with (the store's clock). */
  clock: Clock;
  log: Logger;
  /** The runs this replica executes now, each with its attempt. */
  running: () => { run_id: string; attempt: number }[];
  /** Aborts a run of this replica that was cancelled, or has ended elsewhere. */
  abort: (runId: string) => void;
  /** Stops a run of this replica that another attempt owns now, writing nothing more. */
  fenced: (runId: string) => void;
  /** The heartbeat begun at `at` (`performance.now()`) confirmed these runs are still ours. */
  renewed: (runIds: string[], at: number) => void;
  /** False while this replica takes no new work (shutdown): it claims nothing then. */
  accepting: () => boolean;
  /** Goes on with a run this replica claimed. */
  resume: (run: ClaimedRun) => void;
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
    // SQLite is one process: a run still `running` when it opens was this process's before a
    // crash or a hand-over at shutdown, and goes on now; runs this replica already executes are
    // heartbeated first, so none is older than the moment the claim compares with.
    if (store.kind === "sqlite" && this.#deps.claimAtOpen !== false) {
      const opened = clock.now();
      await this.#heartbeat();
      await this.#claim(opened, 0);
    }
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
      const at = performance.now();
      const fenced = await this.#deps.store.heartbeat(this.#deps.replicaId, running);
      for (const runId of fenced) this.#deps.fenced(runId);
      const lost = new Set(fenced);
      this.#deps.renewed(running.map((r) => r.run_id).filter((id) => !lost.has(id)), at);
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
        const statuses = await store.runStatuses(running.map((r) => r.run_id));
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
      // of a reachable store to heartbeat again before anything is claimed.
      if (now - this.#reachableSince < replica.lease) return;
      await this.#claim(now, replica.lease);
    } catch (err) {
      this.#reachableSince = undefined;
      this.#deps.log.warn("poll failed", { error: String(err) });
    } finally {
      this.#polling = false;
    }
  }

  /**
   * Claims the runs whose heartbeat is older than `leaseMs`: they go on here as a new attempt
   * (none while shutting down); those out of attempts end `failed`.
   */
  async #claim(now: number, leaseMs: number): Promise<void> {
    const { store, replicaId, maxAttempts, log } = this.#deps;
    const limit = this.#deps.accepting() ? CLAIM_BATCH : 0;
    const { resumed, failed } = await store.claimLostRuns(
      replicaId,
      now,
      leaseMs,
      maxAttempts,
      limit,
    );
    for (const run of failed) await this.#endLost(run);
    for (const run of resumed) {
      log.warn("run resumed: its replica was lost or handed it over", {
        tenant: run.tenant_id,
        run_id: run.run_id,
        session_id: run.session_id,
        owner: run.owner,
        attempt: run.attempt,
        reason: run.handed_over ? "handoff" : "lost",
      });
      this.#deps.resume(run);
    }
  }

  /** Delivers the end of a run out of attempts, to its streams and its chain's followers. */
  async #endLost(run: LostRun): Promise<void> {
    const error = replicaLostError(run.owner);
    this.#deps.log.warn("run failed: its replica was lost and it has no attempts left", {
      tenant: run.tenant_id,
      run_id: run.run_id,
      session_id: run.session_id,
      owner: run.owner,
      status: "failed",
      reason: "replica_lost",
    });
    const event = makeEvent("run_finished", {
      session_id: run.session_id,
      run_id: run.run_id,
      status: "failed",
      interrupt_payload: null,
      result: null,
      error,
    });
    const message = await this.#deps.delivery.endLost(run.run_id, event);
    // A run continuing a chain tells the chain's followers too.
    await announceLostToChain(this.#deps, run, message);
  }
}
