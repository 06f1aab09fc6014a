// Over 400 lines: one lifecycle (start, resume, drive, hand over, shut down); its parts are beside it.
/**
 * The run service: the lifecycle of runs. It starts attached and detached runs (the engine's
 * checks, then the run record), drives each through the engine until its outcome is saved,
 * cancels runs across replicas, opens re-attach streams, answers the add-ons' reads, and shuts
 * down gracefully. Its parts: delivery.ts (events to clients, history and channels), leases.ts
 * (heartbeats, cancellations, lost replicas), chains.ts (runs that continue a run), outcome.ts
 * (a run's end, saved), stream.ts (re-attach streams), reads.ts (read models for add-ons).
 */
import { type Clock, systemClock } from "../clock.ts";
import type { Page, Run, RunRequest } from "../api/schemas.ts";
import type { Config } from "../config/schema.ts";
import {
  type EndNotice,
  makeEvent,
  type RunEvent,
  type RunEventOf,
  type SequencedEvent,
} from "../api/events.ts";
import { type Engine, type EnginePlan, RunHandedOff, type RunIds } from "../engine/mod.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import {
  type ChainFilter,
  type ChainHead,
  type ClaimedRun,
  ConversationChanged,
  type PageQuery,
  RunFenced,
  type Store,
} from "../store/mod.ts";
import { type ActiveRun, newActiveRun } from "./active.ts";
import { cancelChain, type ChainFollower, followChain, type RunLink } from "./chains.ts";
import { Delivery } from "./delivery.ts";
import { runServiceErrors } from "./errors.ts";
import { Leases } from "./leases.ts";
import { ClientGrace } from "./client_grace.ts";
import { outcomeOf, saveOutcome } from "./outcome.ts";
import { passedOn, passOn, resumedActive, resumedRequest } from "./attempts.ts";
import { Multitask, sessionBusy, type WayStrategy } from "./multitask.ts";
import { RunQueue } from "./run_queue.ts";
import { listenForSteering, type SteeringDeps, steerRun } from "./steering.ts";
import { type AttachOptions, openRunStream, queuedEvents, type RunStream } from "./stream.ts";
import { ReplayBudget } from "./replay_budget.ts";
import {
  type ChainState,
  chainState,
  type RunState,
  runState,
  type SessionState,
  sessionState,
} from "./reads.ts";

/** How often a start is planned again when the conversation moved under it. */
const START_ATTEMPTS = 3;

/** A started run: its ids and, for an attached run, its event stream. */
export interface StartedRun {
  run_id: string;
  session_id: string;
  /**
   * The request's messages joined the session's running run `run_id` (`steer`) instead of
   * starting one; its `events` start at their `messages_added`.
   */
  steered?: boolean;
  /** The run waits in the run queue (no free slot, or queued behind its session's runs). */
  queued?: boolean;
  /**
   * Attached runs only: every event of the run, ending with `run_finished`; or, for a client that
   * read too slowly, ending with the `slow_consumer` notice while the run goes on.
   */
  events?: AsyncIterable<SequencedEvent | EndNotice>;
}

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
export type { AttachOptions, ChainFollower, RunLink, RunStream };

/** Starts, cancels and observes runs; one per process (or per test server). */
export class RunService {
  readonly replicaId: string;
  readonly #store: Store;
  readonly #pubsub: PubSub;
  readonly #engine: Engine;
  readonly #log: Logger;
  readonly #pollInterval: number;
  readonly #active = new Map<string, ActiveRun>();
  readonly #delivery: Delivery;
  readonly #leases: Leases;
  readonly #maxAttempts: number;
  readonly #attachedAtCapacity: "wait" | "reject";
  /** What resumed streams replay at once (`runtime.attached.max_replay_bytes`). */
  readonly #replay: ReplayBudget;
  /** The slots of `runtime.runs.max_concurrent` and the store's queue of runs waiting for one. */
  readonly #queue: RunQueue;
  /** The re-attach grace of attached runs whose client went away. */
  readonly #clientGrace: ClientGrace;
  /** Double texting: starts that make way for themselves in a busy session. */
  readonly #multitask: Multitask;
  /** What `steer` needs (steering.ts). */
  readonly #steering: SteeringDeps;
  /** Stops listening for steering wakes. */
  #unlistenSteering: (() => void) | undefined;
  #accepting = true;
  /** Set when shutdown's grace is over: unsaved outcomes are not retried any more. */
  #stopRetrying = false;

  constructor(options: RunServiceOptions) {
    this.replicaId = options.replicaId ?? `replica-${crypto.randomUUID().slice(0, 8)}`;
    this.#store = options.store;
    this.#pubsub = options.pubsub;
    this.#engine = options.engine;
    this.#log = options.log.with({ replica: this.replicaId });
    const runtime = options.config.manifest.runtime;
    this.#pollInterval = runtime.replica.poll_interval;
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
    this.#maxAttempts = runtime.runs.max_attempts;
    this.#attachedAtCapacity = runtime.runs.attached_at_capacity;
    this.#queue = new RunQueue({
      store: this.#store,
      log: this.#log,
      replicaId: this.replicaId,
      maxConcurrent: runtime.runs.max_concurrent,
      tenantMaxRuns: runtime.runs.tenant_max_runs,
      tenantMaxRunning: runtime.runs.tenant_max_running,
      tenantMaxQueued: runtime.runs.tenant_max_queued,
      pollInterval: this.#pollInterval,
      running: () => this.#active.size,
      accepting: () => this.#accepting,
      execute: (run) => void this.#resume(run),
    });
    this.#clientGrace = new ClientGrace({
      store: this.#store,
      log: this.#log,
      graceMs: runtime.attached.reattach_grace,
      cancelled: (runId) => this.#abortLocal(runId),
    });
    this.#multitask = new Multitask({
      store: this.#store,
      log: this.#log,
      attach: (tenant, runId, options) => this.attach(tenant, runId, options),
      lastSeq: (runId) => this.#delivery.lastSeq(runId),
      cancel: (tenant, runId) => this.cancel(tenant, runId),
      pollInterval: this.#pollInterval,
    });
    this.#steering = {
      store: this.#store,
      pubsub: this.#pubsub,
      log: this.#log,
      attach: (tenant, runId, options) => this.attach(tenant, runId, options),
      lastSeq: (runId) => this.#delivery.lastSeq(runId),
    };
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
        [...this.#active.values()].map((a) => ({ run_id: a.run_id, attempt: a.attempt })),
      abort: (runId) => this.#abortLocal(runId),
      fenced: (runId) => this.#handOff(runId, "fenced"),
      renewed: (runIds, at) => {
        for (const id of runIds) {
          const active = this.#active.get(id);
          if (active) active.leaseAt = Math.max(active.leaseAt, at);
        }
        void this.#delivery.flush();
      },
      accepting: () => this.#accepting,
      resume: (run) => void this.#resume(run),
    });
  }

  /** Starts the heartbeat, the cancellation watch, the sweeper and the run queue's poll. */
  async open(): Promise<void> {
    this.#unlistenSteering = await listenForSteering(this.#pubsub, this.#log, (runId) => {
      const active = this.#active.get(runId);
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
    return this.#active.size;
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
    const strategy = request.multitask_strategy ?? "reject";
    const sessionId = request.session_id;
    // A run that continues a chain (`link`) or forks (`checkpoint_id`) starts now or not at all.
    const startsNow = strategy === "enqueue" && (link || request.checkpoint_id);
    if (strategy === "reject" || !sessionId || startsNow) {
      return this.#startNow(tenant, request, attached, link);
    }
    if (strategy === "enqueue") return this.#enqueue(tenant, sessionId, request, attached);
    // Double texting (multitask.ts): when the session has a run going, make way for this one.
    return this.#multitask.inTurn(tenant, sessionId, async () => {
      while (true) {
        if (!this.#accepting) throw runServiceErrors.shuttingDown();
        const current = await this.runningRun(tenant, sessionId);
        if (current && strategy === "steer") {
          const joined = await steerRun(this.#steering, tenant, current, request);
          if (joined) {
            if (!attached) await joined.events.return(undefined);
            return {
              run_id: joined.run_id,
              session_id: sessionId,
              steered: true,
              ...(attached ? { events: joined.events } : {}),
            };
          }
          // The run ended without taking them: they start a run of their own.
        } else if (current) {
          await this.#multitask.makeWay(tenant, current, strategy as WayStrategy);
        }
        try {
          return await this.#startNow(tenant, request, attached, link);
        } catch (err) {
          // Another run took the session meanwhile (from another replica): make way again.
          if (!sessionBusy(err)) throw err;
        }
      }
    });
  }

  /**
   * `enqueue`: starts the run now when its session has no unfinished run, else stores it queued
   * behind the session's runs (its start pending) and answers at once; any replica with a free
   * slot starts it once they ended (run_queue.ts). The client's mistakes are refused first, the
   * request planned against the conversation as it is now.
   */
  async #enqueue(
    tenant: string,
    sessionId: string,
    request: RunRequest,
    attached: boolean,
  ): Promise<StartedRun> {
    while (true) {
      if (!this.#accepting) throw runServiceErrors.shuttingDown();
      if (!(await this.runningRun(tenant, sessionId))) {
        try {
          return await this.#startNow(tenant, request, attached);
        } catch (err) {
          // Another run took the session meanwhile: this one queues behind it.
          if (!sessionBusy(err)) throw err;
          continue;
        }
      }
      const runId = request.run_id ?? crypto.randomUUID();
      const ids = { tenant_id: tenant, session_id: sessionId, run_id: runId };
      if (!attached) request = { ...request, on_disconnect: null };
      await this.#engine.prepare(ids, request);
      await this.#queue.admit(tenant, true);
      await this.#store.queueBehind(tenant, {
        run_id: runId,
        session_id: sessionId,
        owner: this.replicaId,
        request: { ...request, run_id: runId },
      });
      this.#log.info("run queued behind its session's runs", {
        tenant,
        run_id: runId,
        session_id: sessionId,
        attached,
      });
      // Subscribed once it is claimable: a replica may take it first; what it sent is filled in.
      const stream = attached ? await this.attach(tenant, runId, { unstarted: true }) : undefined;
      // The session's runs may have ended meanwhile.
      this.#queue.fill();
      const queued = { run_id: runId, session_id: sessionId, queued: true };
      if (!stream) return queued;
      const depth = await this.#store.queueDepth().catch(() => null);
      return { ...queued, events: queuedEvents(ids, depth, stream) };
    }
  }

  async #startNow(
    tenant: string,
    request: RunRequest,
    attached: boolean,
    link?: RunLink,
  ): Promise<StartedRun> {
    if (!this.#accepting) throw runServiceErrors.shuttingDown();
    const sessionId = request.session_id ?? crypto.randomUUID();
    const runId = request.run_id ?? crypto.randomUUID();
    const ids = { tenant_id: tenant, session_id: sessionId, run_id: runId };
    // Kept on the run: a resumed attempt of an attached run knows whether its client's absence
    // cancels it (see client_grace.ts); a detached run has no client to wait for.
    if (!attached) request = { ...request, on_disconnect: null };
    const capped = await this.#queue.admit(tenant);
    if (capped || this.#queue.waits) {
      const reject = attached && this.#attachedAtCapacity === "reject" && this.#queue.full;
      if (reject) throw runServiceErrors.atCapacity();
      // Its start boundary is written like any run's (the session is its), then it waits for a
      // free slot of any replica, executed like a claimed run; an attached client listens first.
      await this.#begin(ids, request, link);
      const stream = attached ? await this.attach(tenant, runId) : undefined;
      await this.#queue.enqueue(ids);
      const queued = { run_id: runId, session_id: sessionId, queued: true };
      if (!stream) return queued;
      const depth = await this.#store.queueDepth().catch(() => null);
      return { ...queued, events: queuedEvents(ids, depth, stream) };
    }
    const plan = await this.#queue.withSlot(() => this.#begin(ids, request, link));
    const active = newActiveRun(ids, 1, {
      attached: attached ? this.#delivery.attachedQueue() : undefined,
      ...(link ? { chain: link.origin_run_id } : {}),
    });
    this.#active.set(runId, active);
    this.#log.info("run started", { tenant, run_id: runId, session_id: sessionId, attached });
    active.done = this.#drive(active, this.#execute(plan, ids, active));
    // Once the run is visible it can be resumed from its start: its history exists before the
    // start is answered (one round trip to Redis), so a cursor of 0 never meets an empty past.
    await active.recorded.promise;
    return { run_id: runId, session_id: sessionId, events: active.attached };
  }

  /**
   * Plans the run and writes its start boundary (session, run, input messages) in one
   * transaction. A conversation that changed between the plan and the write (a message added or
   * deleted meanwhile) is planned again; after `START_ATTEMPTS` the session counts as busy.
   */
  async #begin(ids: RunIds, request: RunRequest, link?: RunLink): Promise<EnginePlan> {
    for (let attempt = 1;; attempt++) {
      const plan = await this.#engine.prepare(ids, request);
      try {
        await this.#store.createRun(ids.tenant_id, {
          run_id: ids.run_id,
          session_id: ids.session_id,
          parent_checkpoint_id: plan.parent_checkpoint_id,
          owner: this.replicaId,
          // Kept so any replica can resume the run; the input is in the conversation.
          request: { ...request, messages: [], resume_payload: null },
          ...plan.begin,
          ...(link ? { link } : {}),
        });
        return plan;
      } catch (error) {
        if (!(error instanceof ConversationChanged)) throw error;
        if (attempt >= START_ATTEMPTS) throw runServiceErrors.sessionBusy(ids.session_id);
      }
    }
  }

  /** The engine's events of `plan`, executed as `active`'s attempt. */
  #execute(plan: EnginePlan, ids: RunIds, active: ActiveRun): AsyncGenerator<RunEvent> {
    return this.#engine.execute(plan, ids, active.controller.signal, {
      attempt: active.attempt,
      finish: (last) => {
        active.last = last;
      },
      // One look each time a steer was heard (steering.ts).
      steered: () => {
        const heard = active.steered;
        active.steered = false;
        return heard;
      },
    });
  }

  /**
   * Goes on with a run this replica claimed as a new attempt (its replica was lost or handed it
   * over): planned again from its stored request against the conversation at its last
   * checkpoint, numbered after the events its history keeps, with no client attached (clients
   * re-attach with their cursor, on any replica).
   */
  async #resume(claimed: ClaimedRun): Promise<void> {
    const ids = {
      tenant_id: claimed.tenant_id,
      session_id: claimed.session_id,
      run_id: claimed.run_id,
    };
    let request = resumedRequest(claimed);
    const active = resumedActive(claimed);
    this.#active.set(claimed.run_id, active);
    let resolve!: () => void;
    active.done = new Promise<void>((r) => resolve = r);
    try {
      const chain = await this.#store.runChain(claimed.tenant_id, claimed.run_id);
      if (chain && chain.origin_run_id !== claimed.run_id) active.chain = chain.origin_run_id;
      active.seq = await this.#delivery.lastSeq(claimed.run_id);
      // Its attached client's connection went with the lost attempt: it has the grace to return.
      // (Attempt 1 is a queued run taken from the queue: its client is still listening.)
      if (claimed.attempt > 1 && request.on_disconnect === "cancel") {
        await this.#clientGrace.gone(ids.tenant_id, ids.run_id);
      }
      if (claimed.start_pending) {
        // Queued behind its session's runs: its start (its input) is written now.
        request = {
          ...(claimed.request as RunRequest),
          session_id: ids.session_id,
          run_id: ids.run_id,
        };
        const plan = await this.#engine.prepare(ids, request);
        await this.#store.beginQueued({
          ...ids,
          attempt: claimed.attempt,
          messages: plan.begin.messages ?? [],
          checkpoint: null,
          parent_checkpoint_id: plan.parent_checkpoint_id,
          request: { ...request, messages: [], resume_payload: null },
        });
        await this.#drive(active, this.#execute(plan, ids, active));
        return;
      }
      const plan = await this.#engine.prepare(ids, request);
      await this.#drive(active, this.#execute(plan, ids, active));
    } catch (err) {
      // Planned again it cannot run (the manifest changed, the store failed): it fails here.
      this.#log.error("could not resume run", { run_id: claimed.run_id, error: String(err) });
      await this.#drive(active, (async function* () {})());
    } finally {
      resolve();
    }
  }

  /** Cancels a run of the tenant (no change when terminal); `run_not_found` when absent. */
  async cancel(tenant: string, runId: string): Promise<void> {
    const run = await this.#store.cancelRun(tenant, runId);
    if (!run) throw runServiceErrors.runNotFound(runId);
    // `status` is the run's status after the call: `cancelled`, or the terminal one it had.
    this.#log.info("run cancel requested", { tenant, run_id: runId, status: run.status });
    this.#abortLocal(runId);
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
    const all = () => Promise.all([...this.#active.values()].map((a) => a.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const first = await Promise.race([all().then(() => "done" as const), graceOver]);
    clearTimeout(timer);
    if (first === "timeout") {
      this.#stopRetrying = true;
      for (const runId of [...this.#active.keys()]) this.#handOff(runId, "handoff");
      await all();
    }
    this.#clientGrace.close();
    await this.#delivery.flush();
    this.#unlistenSteering?.();
    await this.#leases.close();
  }

  /** Delivers the engine's events until `run_finished`, then saves and delivers the outcome. */
  async #drive(active: ActiveRun, events: AsyncGenerator<RunEvent>): Promise<void> {
    let final: RunEventOf<"run_finished"> | undefined;
    try {
      for await (const event of events) {
        if (event.kind === "run_finished") {
          final = event;
          break;
        }
        const full = this.#delivery.deliver(active, event);
        if (full) await full;
      }
    } catch (err) {
      if (err instanceof RunFenced) active.reason = "fenced";
      else if (!(err instanceof RunHandedOff) && !passedOn(active)) {
        this.#log.error("engine failed", {
          tenant: active.tenant,
          run_id: active.run_id,
          error: String(err),
        });
      }
    }
    if (passedOn(active)) return await this.#passOn(active);
    const outcome = outcomeOf(active.reason, final);
    let finished: RunEventOf<"run_finished">;
    let record: Run | undefined;
    try {
      const deps = { store: this.#store, log: this.#log, givingUp: () => this.#stopRetrying };
      const run = record = await saveOutcome(deps, active, outcome);
      // The outcome's write was fenced: the run was still this attempt's.
      active.leaseAt = performance.now();
      finished = makeEvent("run_finished", {
        session_id: active.session_id,
        run_id: active.run_id,
        status: run.status,
        interrupt_payload: run.interrupt_payload,
        result: run.result,
        error: run.error,
        usage: run.usage,
        finish_reason: run.finish_reason,
        cost: run.cost,
      });
    } catch (err) {
      if (err instanceof RunFenced) {
        active.reason = "fenced";
        return await this.#passOn(active);
      }
      this.#log.error("could not persist run outcome", {
        tenant: active.tenant,
        run_id: active.run_id,
        error: String(err),
      });
      finished = makeEvent("run_finished", {
        session_id: active.session_id,
        run_id: active.run_id,
        status: outcome.status,
        interrupt_payload: outcome.interrupt_payload ?? null,
        result: outcome.result ?? null,
        error: outcome.error ?? null,
        usage: final?.usage ?? null,
        finish_reason: final?.finish_reason ?? null,
        cost: final?.cost ?? null,
      });
    }
    await this.#delivery.deliver(active, finished);
    // A run that ends before its first flush still answers its start.
    active.recorded.resolve();
    active.attached?.end();
    this.#active.delete(active.run_id);
    this.#queue.fill();
    // A failed run is worth a look: warn, with what went wrong (the message is scrubbed of
    // secrets where it was made, and by the logger again).
    this.#log[finished.status === "failed" ? "warn" : "info"]("run finished", {
      tenant: active.tenant,
      run_id: active.run_id,
      session_id: active.session_id,
      status: finished.status,
      // Why this replica aborted it, if it did: a cancellation or the shutdown grace running out.
      reason: active.reason,
      error_code: finished.error?.code,
      error: finished.error?.message,
      finish_reason: finished.finish_reason ?? undefined,
      usage: finished.usage ?? undefined,
      // The provider's warnings about the run's requests, each once.
      warnings: record?.warnings.length ? record.warnings : undefined,
      ms: Math.round(performance.now() - active.started),
    });
  }

  /**
   * Stops a run here without a word more from this attempt: at shutdown (`handoff`) or because
   * another attempt owns it already (`fenced`). The engine, aborted with `RunHandedOff`, writes
   * nothing more.
   */
  #handOff(runId: string, reason: "handoff" | "fenced"): void {
    const active = this.#active.get(runId);
    if (!active) return;
    active.reason = reason;
    if (!active.controller.signal.aborted) active.controller.abort(new RunHandedOff());
  }

  /** Ends this replica's part in a run another attempt goes on with (see attempts.ts). */
  async #passOn(active: ActiveRun): Promise<void> {
    await passOn({ store: this.#store, delivery: this.#delivery, log: this.#log }, active);
    this.#active.delete(active.run_id);
    this.#queue.fill();
  }

  #abortLocal(runId: string): void {
    const active = this.#active.get(runId);
    if (!active || active.controller.signal.aborted) return;
    active.reason ??= "cancelled";
    active.controller.abort(new Error("cancelled"));
  }
}
