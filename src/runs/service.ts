/**
 * The run service: the lifecycle of runs. It starts attached and detached runs (starts.ts: the
 * multitask strategies, the run queue's admission, the engine's checks, then the run record),
 * drives each through the engine until its outcome is saved (runner.ts), cancels runs across
 * replicas, opens re-attach streams, answers the add-ons' reads, and shuts down gracefully. Its
 * other parts: delivery.ts (events to clients, history and channels), leases.ts (heartbeats,
 * cancellations, lost replicas), chains.ts (runs that continue a run), outcome.ts (a run's end,
 * saved), stream.ts (re-attach streams), reads.ts (read models for add-ons).
 */
import { type Clock, systemClock } from "../clock.ts";
import type { Page, Run, RunRequest } from "../api/schemas.ts";
import type { Config } from "../config/schema.ts";
import type { Engine } from "../engine/mod.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import type { ChainFilter, ChainHead, PageQuery, Store } from "../store/mod.ts";
import { cancelChain, type ChainFollower, followChain, type RunLink } from "./chains.ts";
import { Delivery } from "./delivery.ts";
import { runServiceErrors } from "./errors.ts";
import { Leases } from "./leases.ts";
import { ClientGrace } from "./client_grace.ts";
import { Multitask } from "./multitask.ts";
import { RunQueue } from "./run_queue.ts";
import { Runner } from "./runner.ts";
import { type StartedRun, Starts } from "./starts.ts";
import { listenForSteering } from "./steering.ts";
import { type AttachOptions, openRunStream, type RunStream } from "./stream.ts";
import { ReplayBudget } from "./replay_budget.ts";
import {
  type ChainState,
  chainState,
  type RunState,
  runState,
  type SessionState,
  sessionState,
} from "./reads.ts";

/** Dependencies of the run service. */
export interface RunServiceOptions {
  config: Config;
  store: Store;
  pubsub: PubSub;
  engine: Engine;
  log: Logger;
  /** This process's replica id (random when omitted). */
  replicaId?: string;
  /** The time lease sweeps compare heartbeats with (the store's clock; real time by default). */
  clock?: Clock;
  /** False: opening claims no SQLite run (another run service of the process still owns them). */
  claimAtOpen?: boolean;
}

// The types of the service's signatures, for its callers.
export type { AttachOptions, ChainFollower, RunLink, RunStream, StartedRun };

/** Starts, cancels and observes runs; one per process (or per test server). */
export class RunService {
  readonly replicaId: string;
  readonly #store: Store;
  readonly #pubsub: PubSub;
  readonly #engine: Engine;
  readonly #log: Logger;
  readonly #pollInterval: number;
  /** `runtime.pubsub.retention`: 0 keeps no history of runs. */
  readonly #retention: number;
  /** The runs this replica executes (runner.ts). */
  readonly #runner: Runner;
  /** Starts runs (starts.ts). */
  readonly #starts: Starts;
  readonly #delivery: Delivery;
  readonly #leases: Leases;
  /** What resumed streams replay at once (`runtime.attached.max_replay_bytes`). */
  readonly #replay: ReplayBudget;
  /** The slots of `runtime.runs.max_concurrent` and the store's queue of runs waiting for one. */
  readonly #queue: RunQueue;
  /** The re-attach grace of attached runs whose client went away. */
  readonly #clientGrace: ClientGrace;
  /** Stops listening for steering wakes. */
  #unlistenSteering: (() => void) | undefined;
  #accepting = true;

  constructor(options: RunServiceOptions) {
    this.replicaId = options.replicaId ?? `replica-${crypto.randomUUID().slice(0, 8)}`;
    this.#store = options.store;
    this.#pubsub = options.pubsub;
    this.#engine = options.engine;
    this.#log = options.log.with({ replica: this.replicaId });
    const runtime = options.config.manifest.runtime;
    this.#pollInterval = runtime.replica.poll_interval;
    this.#retention = runtime.pubsub.retention;
    this.#delivery = new Delivery(
      this.#pubsub,
      this.#log,
      runtime.attached,
      runtime.replica.lease,
    );
    this.#replay = new ReplayBudget(
      runtime.attached.max_replay_bytes,
      runtime.attached.drain_timeout,
    );
    this.#queue = new RunQueue({
      store: this.#store,
      log: this.#log,
      replicaId: this.replicaId,
      maxConcurrent: runtime.runs.max_concurrent,
      tenantMaxRuns: runtime.runs.tenant_max_runs,
      tenantMaxRunning: runtime.runs.tenant_max_running,
      tenantMaxQueued: runtime.runs.tenant_max_queued,
      pollInterval: this.#pollInterval,
      running: () => this.#runner.active.size,
      accepting: () => this.#accepting,
      execute: (run) => void this.#runner.resume(run),
    });
    this.#clientGrace = new ClientGrace({
      store: this.#store,
      log: this.#log,
      graceMs: runtime.attached.reattach_grace,
      cancelled: (runId) => this.#runner.abortLocal(runId),
    });
    this.#runner = new Runner({
      store: this.#store,
      engine: this.#engine,
      delivery: this.#delivery,
      log: this.#log,
      clientGrace: this.#clientGrace,
      fill: () => this.#queue.fill(),
    });
    const multitask = new Multitask({
      store: this.#store,
      log: this.#log,
      attach: (tenant, runId, options) => this.attach(tenant, runId, options),
      lastSeq: (runId) => this.#delivery.lastSeq(runId),
      cancel: (tenant, runId) => this.cancel(tenant, runId),
      pollInterval: this.#pollInterval,
    });
    this.#starts = new Starts({
      store: this.#store,
      engine: this.#engine,
      delivery: this.#delivery,
      log: this.#log,
      replicaId: this.replicaId,
      queue: this.#queue,
      attachedAtCapacity: runtime.runs.attached_at_capacity,
      runner: this.#runner,
      multitask,
      steering: {
        store: this.#store,
        pubsub: this.#pubsub,
        log: this.#log,
        attach: (tenant, runId, options) => this.attach(tenant, runId, options),
        lastSeq: (runId) => this.#delivery.lastSeq(runId),
      },
      accepting: () => this.#accepting,
      runningRun: (tenant, sessionId) => this.runningRun(tenant, sessionId),
      attach: (tenant, runId, options) => this.attach(tenant, runId, options),
    });
    this.#leases = new Leases({
      store: this.#store,
      pubsub: this.#pubsub,
      delivery: this.#delivery,
      replicaId: this.replicaId,
      replica: runtime.replica,
      clock: options.clock ?? systemClock,
      log: this.#log,
      maxAttempts: runtime.runs.max_attempts,
      claimAtOpen: options.claimAtOpen,
      running: () =>
        [...this.#runner.active.values()].map((a) => ({ run_id: a.run_id, attempt: a.attempt })),
      abort: (runId) => this.#runner.abortLocal(runId),
      fenced: (runId) => this.#runner.handOff(runId, "fenced"),
      renewed: (runIds, at) => {
        for (const id of runIds) {
          const active = this.#runner.active.get(id);
          if (active) active.leaseAt = Math.max(active.leaseAt, at);
        }
        void this.#delivery.flush();
      },
      accepting: () => this.#accepting,
      resume: (run) => void this.#runner.resume(run),
    });
  }

  /** Starts the heartbeat, the cancellation watch, the sweeper and the run queue's poll. */
  async open(): Promise<void> {
    this.#unlistenSteering = await listenForSteering(this.#pubsub, this.#log, (runId) => {
      const active = this.#runner.active.get(runId);
      if (active) active.steered = true;
    });
    await this.#leases.open();
    this.#queue.open();
  }

  /** False once shutdown began: no new runs, and `/readyz` answers 503. */
  get accepting(): boolean {
    return this.#accepting;
  }

  /** Number of runs this process executes now. */
  get activeCount(): number {
    return this.#runner.active.size;
  }

  /**
   * Validates and starts a run. Every client mistake is thrown before anything is written; the
   * session is created when the request names one that does not exist yet.
   */
  start(
    tenant: string,
    request: RunRequest,
    attached: boolean,
    link?: RunLink,
  ): Promise<StartedRun> {
    return this.#starts.start(tenant, request, attached, link);
  }

  /**
   * Cancels a run of the tenant (no change when terminal); `run_not_found` when absent. Resolves
   * to the run after the cancel.
   */
  async cancel(tenant: string, runId: string): Promise<Run> {
    const run = await this.#store.cancelRun(tenant, runId);
    if (!run) throw runServiceErrors.runNotFound(runId);
    // `status` is the run's status after the call: `cancelled`, or the terminal one it had.
    this.#log.info("run cancel requested", { tenant, run_id: runId, status: run.status });
    this.#runner.abortLocal(runId);
    return run;
  }

  /**
   * Opens a stream of a run's events for an observer (see stream.ts): without a cursor the live
   * events from now on of a running run; with `after`, every retained event after that sequence
   * number, then the live ones.
   */
  async attach(tenant: string, runId: string, options: AttachOptions = {}): Promise<RunStream> {
    const stream = await openRunStream(
      {
        store: this.#store,
        pubsub: this.#pubsub,
        watchMs: this.#pollInterval * 4,
        replay: this.#replay,
        historyHere: (run) =>
          this.#retention > 0 &&
          (run.status === "queued" || this.#pubsub.kind !== "memory" ||
            this.#runner.active.has(run.run_id)),
      },
      tenant,
      runId,
      options,
    );
    // A client back with its cursor takes the run over: it is not cancelled for the attached
    // client it replaces (client_grace.ts). An observer of live events only changes nothing.
    if (stream.live && options.after !== undefined) await this.#store.clientReattached(runId);
    return stream;
  }

  /**
   * The client of an attached run with `on_disconnect = "cancel"` went away: the run is cancelled
   * unless a client re-attaches within `runtime.attached.reattach_grace` (see client_grace.ts).
   */
  clientGone(tenant: string, runId: string): Promise<void> {
    return this.#clientGrace.gone(tenant, runId);
  }

  /** A run of the tenant, or null. */
  getRun(tenant: string, runId: string): Promise<Run | null> {
    return this.#store.getRun(tenant, runId);
  }

  /**
   * The session's running (or queued) run, or null (one run at a time per session); null too for a session
   * that does not exist (yet): a thread a client names before its first run is an empty one.
   */
  async runningRun(tenant: string, sessionId: string): Promise<Run | null> {
    if (!(await this.#store.getSession(tenant, sessionId))) return null;
    const page = await this.#store.listRuns(tenant, sessionId, {
      statuses: ["running", "queued"],
    }, {
      per_page: 1,
    });
    return page.items[0] ?? null;
  }

  /** What a session holds now (conversation, latest checkpoint, waiting calls), or null. */
  sessionState(tenant: string, sessionId: string): Promise<SessionState | null> {
    return sessionState(this.#store, tenant, sessionId);
  }

  /** What a run left behind (its messages, its context), or null. */
  runState(tenant: string, runId: string): Promise<RunState | null> {
    return runState(this.#store, tenant, runId);
  }

  /** The chain a run belongs to, with what each of its runs left; null when absent. */
  chainState(tenant: string, runId: string): Promise<ChainState | null> {
    return chainState(this.#store, tenant, runId);
  }

  /** The tenant's chains, each as its latest run, most recently updated first. */
  listChains(tenant: string, filter: ChainFilter, page: PageQuery): Promise<Page<ChainHead>> {
    return this.#store.listChains(tenant, filter, page);
  }

  /**
   * Ends a chain whose latest run (`latest`, interrupted) waits for input, without going on (see
   * chains.ts). Fails like any start when the session is busy or the server shuts down.
   */
  cancelChain(tenant: string, latest: Run, link: RunLink): Promise<Run> {
    if (!this.#accepting) return Promise.reject(runServiceErrors.shuttingDown());
    const deps = {
      store: this.#store,
      pubsub: this.#pubsub,
      owner: this.replicaId,
      log: this.#log,
    };
    return cancelChain(deps, tenant, latest, link);
  }

  /**
   * Follows the runs that continue the chain of `originRunId` from now on (subscribe before
   * reading the chain's state, so no continuation slips between the read and the subscription).
   */
  followChain(originRunId: string): Promise<ChainFollower> {
    return followChain(this.#pubsub, originRunId);
  }

  /**
   * Stops accepting runs, lets running ones finish within `graceMs`, then hands the rest over:
   * they stop here without writing more and are released for any replica (or, on SQLite, this
   * process's next start) to resume from their last checkpoint at once; then stops the
   * background loops.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.#accepting = false;
    this.#queue.stop();
    const all = () => Promise.all([...this.#runner.active.values()].map((a) => a.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const first = await Promise.race([all().then(() => "done" as const), graceOver]);
    clearTimeout(timer);
    if (first === "timeout") {
      this.#runner.stopRetrying = true;
      for (const runId of [...this.#runner.active.keys()]) this.#runner.handOff(runId, "handoff");
      await all();
    }
    this.#clientGrace.close();
    await this.#delivery.flush();
    this.#unlistenSteering?.();
    await this.#leases.close();
  }
}
