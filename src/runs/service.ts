/**
 * The run service: starts attached and detached runs, delivers their events (to the attached
 * stream in memory, to re-attach streams through pub/sub), persists their outcome, cancels them
 * across replicas, and keeps no zombie runs (heartbeats, a sweeper, graceful shutdown).
 */
import { clearImmediate, setImmediate } from "node:timers";
import { type Clock, systemClock } from "../clock.ts";
import type { Page, Run, RunRequest } from "../api/schemas.ts";
import type { Config } from "../config/schema.ts";
import { errors } from "../errors.ts";
import {
  encodeEvent,
  type EndNotice,
  makeEvent,
  type RunEvent,
  type RunEventOf,
  type RunStreamItem,
  type SequencedEvent,
} from "../api/events.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import {
  type ChainFilter,
  type ChainHead,
  ConversationChanged,
  type NewRun,
  type PageQuery,
  type RunOutcome,
  type StepCommit,
  type Store,
  StoreUnavailable,
} from "../store/mod.ts";
import { AsyncQueue } from "./queue.ts";
import {
  type AttachOptions,
  decodeRunMessage,
  openRunStream,
  runChannel,
  type RunStream,
} from "./stream.ts";
import {
  type ChainState,
  chainState,
  type RunState,
  runState,
  type SessionState,
  sessionState,
} from "./reads.ts";

/** The ids of one run. */
type RunIds = { tenant_id: string; session_id: string; run_id: string };

/** What the engine must offer the run service. */
export interface Engine {
  /**
   * Validates a run request against the manifest and the session's state before anything is
   * written: throws ApiError 422 (model, capabilities, tools, resume payload), 404 (checkpoint)
   * or 409 (a used message id).
   */
  prepare(ids: RunIds, request: RunRequest): Promise<PreparedRun>;
  /**
   * Executes a prepared run; the last event is always `run_finished`. Just before it, the engine
   * hands its last step's writes to `options.finish`, for the outcome's transaction.
   */
  execute(
    prepared: PreparedRun,
    ids: RunIds,
    signal: AbortSignal,
    options: { finish: (last: StepCommit | null) => void },
  ): AsyncGenerator<RunEvent>;
}

/** The engine's prepared run: what the run record's transaction writes. */
export interface PreparedRun {
  parent_checkpoint_id: string | null;
  /** Written with the run record: the session, a fork's conversation, the input messages. */
  begin: Pick<NewRun, "create_session" | "expect_clock" | "fork_checkpoint_id" | "messages">;
}

/** How often a start is planned again when the conversation moved under it. */
const START_ATTEMPTS = 3;

/** Why the service aborted a run it executes. */
type AbortReason = "cancelled" | "shutdown";

interface ActiveRun {
  tenant: string;
  run_id: string;
  session_id: string;
  controller: AbortController;
  reason?: AbortReason;
  /** The attached stream's queue, until the run ends or drops a client that reads too slowly. */
  attached?: AsyncQueue<SequencedEvent | EndNotice>;
  done: Promise<void>;
  /** The sequence number of the last event delivered. */
  seq: number;
  /** The timestamp of the last event delivered: timestamps never go backwards within a run. */
  timestamp: number;
  /** Resolves once the first event is in the run's history (or the run ended before that). */
  recorded: PromiseWithResolvers<void>;
  /** The engine's last step, committed with the outcome. */
  last: StepCommit | null;
  /** The origin of the chain the run continues, if it continues one. */
  chain?: string;
  /** `performance.now()` at start, for the duration in the "run finished" log line. */
  started: number;
}

/** A started run: its ids and, for an attached run, its event stream. */
export interface StartedRun {
  run_id: string;
  session_id: string;
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
}

export { decodeRunMessage, runChannel };
export type { AttachOptions, RunStream };

/**
 * The pub/sub channel of the live events of every run continuing the chain of `originRunId` (the
 * origin's own events are on its run channel only), so one subscription follows a chain's turns.
 */
export function chainChannel(originRunId: string): string {
  return `chain:${originRunId}`;
}

/** A run continuing a chain: its origin, and what to keep with the link. */
export type RunLink = NonNullable<NewRun["link"]>;

/** A subscription to a chain's continuing runs; `close` ends it (and `events`). */
export interface ChainFollower {
  /**
   * Their events from the time of subscribing (each with its sequence number in its own run), then
   * an `EndNotice` if delivery breaks.
   */
  events: AsyncIterable<RunStreamItem>;
  close(): void;
}

/** Starts, cancels and observes runs; one per process (or per test server). */
export class RunService {
  readonly replicaId: string;
  readonly #store: Store;
  readonly #pubsub: PubSub;
  readonly #engine: Engine;
  readonly #log: Logger;
  readonly #replica: Config["manifest"]["runtime"]["replica"];
  readonly #attachedLimits: Config["manifest"]["runtime"]["attached"];
  readonly #active = new Map<string, ActiveRun>();
  /**
   * Events waiting for the end of the event-loop turn, per run (whether the run ended: its
   * history is sealed after the last append).
   */
  readonly #outbox = new Map<
    string,
    { active: ActiveRun; entries: { seq: number; message: string }[]; sealed: boolean }
  >();
  #flushTimer?: ReturnType<typeof setImmediate>;
  readonly #clock: Clock;
  #accepting = true;
  #timers: ReturnType<typeof setInterval>[] = [];
  #unwatch?: () => Promise<void>;
  #polling = false;
  #lastSweep = 0;
  /**
   * Since when (clock ms) every store call of the heartbeat and the poll succeeded; undefined
   * while the store fails. The sweeper waits for a whole lease of it (see `#poll`).
   */
  #reachableSince: number | undefined;
  /** Set when shutdown's grace is over: unsaved outcomes are not retried any more. */
  #stopRetrying = false;

  constructor(options: RunServiceOptions) {
    this.replicaId = options.replicaId ?? `replica-${crypto.randomUUID().slice(0, 8)}`;
    this.#store = options.store;
    this.#pubsub = options.pubsub;
    this.#engine = options.engine;
    this.#log = options.log.with({ replica: this.replicaId });
    this.#replica = options.config.manifest.runtime.replica;
    this.#attachedLimits = options.config.manifest.runtime.attached;
    this.#clock = options.clock ?? systemClock;
  }

  /** Starts the heartbeat, the cancellation watch and the sweeper. */
  async open(): Promise<void> {
    this.#unwatch = await this.#store.watchCancellations(
      (runId) => this.#abortLocal(runId),
      () => {
        // Cancellations made while the watch was down were not heard: look once now.
        this.#log.info("cancellation watch re-established");
        void this.#poll();
      },
    );
    this.#reachableSince = this.#clock.now();
    this.#timers.push(setInterval(() => this.#heartbeat(), this.#replica.heartbeat_interval));
    this.#timers.push(setInterval(() => this.#poll(), this.#replica.poll_interval));
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
  async start(
    tenant: string,
    request: RunRequest,
    attached: boolean,
    link?: RunLink,
  ): Promise<StartedRun> {
    if (!this.#accepting) throw errors.shuttingDown();
    const sessionId = request.session_id ?? crypto.randomUUID();
    const runId = request.run_id ?? crypto.randomUUID();
    const ids = { tenant_id: tenant, session_id: sessionId, run_id: runId };
    const prepared = await this.#begin(ids, request, link);
    const active: ActiveRun = {
      tenant,
      run_id: runId,
      session_id: sessionId,
      controller: new AbortController(),
      attached: attached
        ? new AsyncQueue<SequencedEvent | EndNotice>(this.#attachedLimits.buffer)
        : undefined,
      done: Promise.resolve(),
      last: null,
      started: performance.now(),
      seq: 0,
      timestamp: 0,
      recorded: Promise.withResolvers<void>(),
      ...(link ? { chain: link.origin_run_id } : {}),
    };
    this.#active.set(runId, active);
    this.#log.info("run started", { tenant, run_id: runId, session_id: sessionId, attached });
    const events = this.#engine.execute(prepared, ids, active.controller.signal, {
      finish: (last) => {
        active.last = last;
      },
    });
    active.done = this.#drive(active, events);
    // Once the run is visible it can be resumed from its start: its history exists before the
    // start is answered (one round trip to Redis), so a cursor of 0 never meets an empty past.
    await active.recorded.promise;
    return { run_id: runId, session_id: sessionId, events: active.attached };
  }

  /**
   * Plans the run and writes its start boundary (session, run, input messages) in one
   * transaction. A conversation that changed between the plan and the write (a message added or
   * deleted meanwhile) is planned again; after `START_ATTEMPTS` it is 409003.
   */
  async #begin(ids: RunIds, request: RunRequest, link?: RunLink): Promise<PreparedRun> {
    for (let attempt = 1;; attempt++) {
      const prepared = await this.#engine.prepare(ids, request);
      try {
        await this.#store.createRun(ids.tenant_id, {
          run_id: ids.run_id,
          session_id: ids.session_id,
          parent_checkpoint_id: prepared.parent_checkpoint_id,
          owner: this.replicaId,
          ...prepared.begin,
          ...(link ? { link } : {}),
        });
        return prepared;
      } catch (error) {
        if (!(error instanceof ConversationChanged)) throw error;
        if (attempt >= START_ATTEMPTS) throw errors.sessionBusy(ids.session_id);
      }
    }
  }

  /** Cancels a run of the tenant (204 semantics: no change when terminal); 404 when absent. */
  async cancel(tenant: string, runId: string): Promise<void> {
    const run = await this.#store.cancelRun(tenant, runId);
    if (!run) throw errors.runNotFound(runId);
    // `status` is the run's status after the call: `cancelled`, or the terminal one it had.
    this.#log.info("run cancel requested", { tenant, run_id: runId, status: run.status });
    this.#abortLocal(runId);
  }

  /**
   * Opens a stream of a run's events for an observer (see stream.ts): without a cursor the live
   * events from now on of a running run (404, 409004); with `after`, every retained event after
   * that sequence number, then the live ones (410001 when they are not retained).
   */
  attach(tenant: string, runId: string, options: AttachOptions = {}): Promise<RunStream> {
    return openRunStream(
      {
        store: this.#store,
        pubsub: this.#pubsub,
        watchMs: this.#replica.poll_interval * 4,
      },
      tenant,
      runId,
      options,
    );
  }

  /** A run of the tenant, or null. */
  getRun(tenant: string, runId: string): Promise<Run | null> {
    return this.#store.getRun(tenant, runId);
  }

  /** The session's running run, or null (one run at a time per session). */
  async runningRun(tenant: string, sessionId: string): Promise<Run | null> {
    const page = await this.#store.listRuns(tenant, sessionId, { statuses: ["running"] }, {
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
   * Ends a chain whose latest run (`latest`, interrupted) waits for input, without going on: a
   * run continuing the chain from `latest`'s checkpoint is recorded `cancelled` at once, without
   * executing anything, and announced to the chain's followers. The session is untouched (a
   * later run closes the waiting calls as unanswered, as after any interrupted run). Fails like
   * any start when the session is busy.
   */
  async cancelChain(tenant: string, latest: Run, link: RunLink): Promise<Run> {
    if (!this.#accepting) throw errors.shuttingDown();
    const runId = crypto.randomUUID();
    await this.#store.createRun(tenant, {
      run_id: runId,
      session_id: latest.session_id,
      parent_checkpoint_id: latest.checkpoint_id ?? latest.parent_checkpoint_id,
      owner: this.replicaId,
      link,
    });
    const run = await this.#store.finishRun(runId, { status: "cancelled" });
    this.#log.info("chain cancelled while waiting", {
      tenant,
      run_id: runId,
      session_id: run.session_id,
      chain: link.origin_run_id,
    });
    const event = makeEvent("run_finished", {
      session_id: run.session_id,
      run_id: runId,
      status: run.status,
      interrupt_payload: null,
      result: null,
      error: null,
    });
    const item: SequencedEvent = { seq: null, event };
    await this.#pubsub.publish(chainChannel(link.origin_run_id), JSON.stringify(item));
    return run;
  }

  /**
   * Follows the runs that continue the chain of `originRunId` from now on (subscribe before
   * reading the chain's state, so no continuation slips between the read and the subscription).
   */
  async followChain(originRunId: string): Promise<ChainFollower> {
    const sub = await this.#pubsub.subscribe(chainChannel(originRunId));
    return {
      events: (async function* () {
        try {
          for await (const message of sub) yield* decodeRunMessage(message);
          const why = await sub.ended;
          if (why !== "closed") {
            yield { notice: why === "overflow" ? "subscriber_overflow" : "transport_lost" };
          }
        } finally {
          sub.close();
        }
      })(),
      close: () => sub.close(),
    };
  }

  /**
   * Stops accepting runs, lets running ones finish within `graceMs`, then interrupts the rest with
   * their state persisted, and stops the background loops.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.#accepting = false;
    const all = () => Promise.all([...this.#active.values()].map((a) => a.done));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), graceMs);
    });
    const first = await Promise.race([all().then(() => "done" as const), graceOver]);
    clearTimeout(timer);
    if (first === "timeout") {
      this.#stopRetrying = true;
      for (const active of this.#active.values()) {
        active.reason ??= "shutdown";
        active.controller.abort(new Error("shutdown"));
      }
      await all();
    }
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    this.#flush();
    await this.#unwatch?.();
  }

  async #drive(active: ActiveRun, events: AsyncGenerator<RunEvent>): Promise<void> {
    let final: RunEventOf<"run_finished"> | undefined;
    try {
      for await (const event of events) {
        if (event.kind === "run_finished") {
          final = event;
          break;
        }
        const full = this.#deliver(active, event);
        if (full) await full;
      }
    } catch (err) {
      this.#log.error("engine failed", {
        tenant: active.tenant,
        run_id: active.run_id,
        error: String(err),
      });
    }
    const outcome = this.#outcome(active, final);
    let finished: RunEventOf<"run_finished">;
    try {
      const run = await this.#persistOutcome(active, outcome);
      finished = makeEvent("run_finished", {
        session_id: active.session_id,
        run_id: active.run_id,
        status: run.status,
        interrupt_payload: run.interrupt_payload,
        result: run.result,
        error: run.error,
      });
    } catch (err) {
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
      });
    }
    await this.#deliver(active, finished);
    // A run that ends before its first flush still answers its start.
    active.recorded.resolve();
    active.attached?.end();
    this.#active.delete(active.run_id);
    this.#log.info("run finished", {
      tenant: active.tenant,
      run_id: active.run_id,
      session_id: active.session_id,
      status: finished.status,
      // Why this replica aborted it, if it did: a cancellation or the shutdown grace running out.
      reason: active.reason,
      error_code: finished.error?.code,
      ms: Math.round(performance.now() - active.started),
    });
  }

  /**
   * Commits the last step with the outcome. When the last step cannot be written (the session's
   * conversation belongs to another run by now, or a constraint refuses it), the run still ends:
   * `failed`, without that step.
   */
  async #finish(active: ActiveRun, outcome: RunOutcome) {
    const last = active.last;
    if (!last) return await this.#store.finishRun(active.run_id, outcome);
    try {
      const run = await this.#store.finishRun(active.run_id, outcome, last);
      active.last = null;
      return run;
    } catch (err) {
      // An outage is retried whole, the last step included (`#persistOutcome`).
      if (err instanceof StoreUnavailable) throw err;
      active.last = null;
      this.#log.error("could not save the last step of the run", {
        tenant: active.tenant,
        run_id: active.run_id,
        error: String(err),
      });
      return await this.#store.finishRun(active.run_id, {
        status: "failed",
        error: { code: "internal_error", message: "the run's last step could not be saved" },
      });
    }
  }

  /**
   * Saves the outcome, retrying while the store is unavailable: the client's final event is the
   * saved record, so it waits (the run stays active, heartbeats go on, so no other replica sweeps
   * it) until the store answers. Only when shutdown's grace is over does it stop retrying.
   */
  async #persistOutcome(active: ActiveRun, outcome: RunOutcome): Promise<Run> {
    for (let attempt = 0;; attempt++) {
      try {
        return await this.#finish(active, outcome);
      } catch (err) {
        if (!(err instanceof StoreUnavailable) || this.#stopRetrying) throw err;
        if (attempt === 0) {
          this.#log.warn("store unavailable: the run's outcome is saved once it answers", {
            tenant: active.tenant,
            run_id: active.run_id,
            error: err.message,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 1000)));
      }
    }
  }

  #outcome(active: ActiveRun, final: RunEventOf<"run_finished"> | undefined): RunOutcome {
    if (active.reason === "shutdown") {
      return {
        status: "interrupted",
        error: {
          code: "shutdown",
          message: "the server shut down before the run finished; its last checkpoint is kept",
        },
        interrupt_payload: { reason: "shutdown" },
      };
    }
    if (!final) {
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

  /**
   * Publishes the event and hands it to the attached stream. Returns a promise only when that
   * stream is full: the run then waits for its client (backpressure), up to `drain_timeout`.
   */
  #deliver(active: ActiveRun, event: RunEvent): Promise<void> | undefined {
    // Numbered here, the one place every event of the run passes; and never earlier in time than
    // the event before it.
    if (event.timestamp < active.timestamp) event = { ...event, timestamp: active.timestamp };
    active.timestamp = event.timestamp;
    const item: SequencedEvent = { seq: ++active.seq, event };
    this.#publish(active, item);
    const queue = active.attached;
    if (!queue || queue.push(item)) return undefined;
    return this.#awaitRoom(active, queue, item);
  }

  /**
   * Waits for a slow attached client to make room. One that does not within `drain_timeout` is
   * dropped: its stream ends with the `slow_consumer` notice and the run goes on without it (the
   * client can re-attach); so a client that stops reading holds at most `buffer` events here.
   */
  async #awaitRoom(
    active: ActiveRun,
    queue: AsyncQueue<SequencedEvent | EndNotice>,
    event: SequencedEvent,
  ): Promise<void> {
    if (await queue.room(this.#attachedLimits.drain_timeout) && queue.push(event)) return;
    active.attached = undefined;
    queue.end({ notice: "slow_consumer" });
    this.#log.warn("attached client dropped: it read too slowly", {
      tenant: active.tenant,
      run_id: active.run_id,
      buffer: this.#attachedLimits.buffer,
      drain_timeout_ms: this.#attachedLimits.drain_timeout,
    });
  }

  /**
   * Queues an event for its run's channel. The events one turn of the event loop produces go out
   * as one message per run (a model that streams a burst of tokens costs one publish, not one per
   * token), in order, at the next turn; each is kept in the run's history first.
   */
  #publish(active: ActiveRun, item: SequencedEvent): void {
    // The event's JSON is shared with the native stream (`encodeEvent`): encoded once.
    const message = `{"seq":${item.seq},"event":${encodeEvent(item.event)}}`;
    const entry = { seq: item.seq!, message };
    let box = this.#outbox.get(active.run_id);
    if (box) box.entries.push(entry);
    else this.#outbox.set(active.run_id, box = { active, entries: [entry], sealed: false });
    if (item.event.kind === "run_finished") box.sealed = true;
    // setImmediate, not setTimeout(0): a timer set from a timer callback five deep (a paced model
    // stream) is clamped to 4 ms, which re-attached clients would see on every token.
    this.#flushTimer ??= setImmediate(() => this.#flush());
  }

  /**
   * Appends what `#publish` queued to each run's history and publishes it on the run's channel
   * and, for a run continuing a chain, on the chain's (so one subscription follows every later
   * turn); a run that ended has its history sealed after.
   */
  #flush(): void {
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer);
    this.#flushTimer = undefined;
    for (const [runId, { active, entries, sealed }] of this.#outbox) {
      const message = entries.length === 1
        ? entries[0].message
        : `[${entries.map((e) => e.message).join(",")}]`;
      const failed = (err: unknown) =>
        this.#log.warn("publish failed", { run_id: runId, error: String(err) });
      const channel = runChannel(runId);
      const appended = this.#pubsub.append(channel, entries, message).catch(failed);
      if (entries[0].seq === 1) void appended.then(() => active.recorded.resolve());
      if (sealed) void this.#pubsub.seal(channel);
      if (active.chain) this.#pubsub.publish(chainChannel(active.chain), message).catch(failed);
    }
    this.#outbox.clear();
  }

  /**
   * Delivers the end of a run whose replica was lost: next in its history when the history is
   * kept (so resumed streams end with it), else live only, outside the sequence. Returns the
   * message it published.
   */
  async #endLost(runId: string, event: RunEventOf<"run_finished">): Promise<string> {
    const channel = runChannel(runId);
    try {
      const page = await this.#pubsub.history(channel, Number.MAX_SAFE_INTEGER);
      if (page?.last) {
        const seq = page.last + 1;
        const message = JSON.stringify({ seq, event });
        await this.#pubsub.append(channel, [{ seq, message }], message);
        await this.#pubsub.seal(channel);
        return message;
      }
    } catch {
      // The history is unreachable: the live end below is all that can be done.
    }
    const message = JSON.stringify({ seq: null, event });
    await this.#pubsub.publish(channel, message).catch(() => {});
    return message;
  }

  #abortLocal(runId: string): void {
    const active = this.#active.get(runId);
    if (!active || active.controller.signal.aborted) return;
    active.reason ??= "cancelled";
    active.controller.abort(new Error("cancelled"));
  }

  async #heartbeat(): Promise<void> {
    if (this.#active.size === 0) return;
    try {
      await this.#store.heartbeat(this.replicaId, [...this.#active.keys()]);
      this.#reachableSince ??= this.#clock.now();
    } catch (err) {
      this.#reachableSince = undefined;
      this.#log.warn("heartbeat failed", { error: String(err) });
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      if (this.#active.size > 0) {
        const statuses = await this.#store.runStatuses([...this.#active.keys()]);
        for (const [runId, status] of statuses) {
          if (status !== "running") this.#abortLocal(runId);
        }
      }
      // Cancellations need the fast poll; lost replicas only need noticing well within a lease.
      const now = this.#clock.now();
      if (now - this.#lastSweep < this.#replica.lease / 5) return;
      this.#lastSweep = now;
      this.#reachableSince ??= now;
      // After an outage every replica's heartbeats are stale, the live ones too: they get a lease
      // of a reachable store to heartbeat again before anything is swept.
      if (now - this.#reachableSince < this.#replica.lease) return;
      const lost = await this.#store.sweepLostRuns(now, this.#replica.lease);
      for (const run of lost) {
        this.#log.warn("run interrupted: its replica was lost", {
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
        const message = await this.#endLost(run.run_id, event);
        // A run continuing a chain tells the chain's followers too.
        const chain = await this.#store.runChain(run.tenant_id, run.run_id).catch(() => null);
        if (chain && chain.origin_run_id !== run.run_id) {
          await this.#pubsub.publish(chainChannel(chain.origin_run_id), message).catch(() => {});
        }
      }
    } catch (err) {
      this.#reachableSince = undefined;
      this.#log.warn("poll failed", { error: String(err) });
    } finally {
      this.#polling = false;
    }
  }
}
