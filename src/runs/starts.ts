/**
 * Starting runs: a run request's way to its start as its `multitask_strategy` says when its
 * session has a run going (`enqueue` queues it behind the session's runs; `interrupt`,
 * `rollback` and `steer` go through multitask.ts and steering.ts), its admission by the run queue
 * (a free slot, else queued), and its start boundary written in one transaction; a started run is
 * handed to the runner (runner.ts).
 */
import type { EndNotice, SequencedEvent } from "../api/events.ts";
import type { Run, RunRequest } from "../api/schemas.ts";
import type { Engine, EnginePlan, RunIds } from "../engine/mod.ts";
import type { Logger } from "../log.ts";
import { ConversationChanged, type Store } from "../store/mod.ts";
import { newActiveRun } from "./active.ts";
import type { RunLink } from "./chains.ts";
import type { Delivery } from "./delivery.ts";
import { runServiceErrors } from "./errors.ts";
import { type Multitask, sessionBusy, type WayStrategy } from "./multitask.ts";
import type { Runner } from "./runner.ts";
import type { RunQueue } from "./run_queue.ts";
import { type SteeringDeps, steerRun } from "./steering.ts";
import { type AttachOptions, queuedEvents, type RunStream } from "./stream.ts";
import { newId } from "../ids.ts";

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

/** What starting runs needs of the run service. */
export interface StartsDeps {
  store: Store;
  engine: Engine;
  delivery: Delivery;
  log: Logger;
  replicaId: string;
  /** The slots of `runtime.runs.max_concurrent` and the store's queue of runs waiting for one. */
  queue: RunQueue;
  /** `runtime.runs.attached_at_capacity`. */
  attachedAtCapacity: "wait" | "reject";
  /** The runs this replica executes; a started run joins them. */
  runner: Runner;
  /** Double texting: starts that make way for themselves in a busy session. */
  multitask: Multitask;
  /** What `steer` needs (steering.ts). */
  steering: SteeringDeps;
  /** False once shutdown began. */
  accepting: () => boolean;
  /** The session's running (or queued) run, or null (`RunService.runningRun`). */
  runningRun: (tenant: string, sessionId: string) => Promise<Run | null>;
  /** Opens a stream of the run's events (`RunService.attach`). */
  attach: (tenant: string, runId: string, options?: AttachOptions) => Promise<RunStream>;
}

/** Starts runs (`RunService.start`). */
export class Starts {
  constructor(private readonly deps: StartsDeps) {}

  /** `RunService.start`: the request's way to its start, as its `multitask_strategy` says. */
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
    return this.deps.multitask.inTurn(tenant, sessionId, async () => {
      while (true) {
        if (!this.deps.accepting()) throw runServiceErrors.shuttingDown();
        const current = await this.deps.runningRun(tenant, sessionId);
        if (current && strategy === "steer") {
          const joined = await steerRun(this.deps.steering, tenant, current, request);
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
          await this.deps.multitask.makeWay(tenant, current, strategy as WayStrategy);
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
      if (!this.deps.accepting()) throw runServiceErrors.shuttingDown();
      if (!(await this.deps.runningRun(tenant, sessionId))) {
        try {
          return await this.#startNow(tenant, request, attached);
        } catch (err) {
          // Another run took the session meanwhile: this one queues behind it.
          if (!sessionBusy(err)) throw err;
          continue;
        }
      }
      const runId = request.run_id ?? newId();
      const ids = { tenant_id: tenant, session_id: sessionId, run_id: runId };
      if (!attached) request = { ...request, on_disconnect: null };
      await this.deps.engine.prepare(ids, request);
      await this.deps.queue.admit(tenant, true);
      await this.deps.store.queueBehind(tenant, {
        run_id: runId,
        session_id: sessionId,
        owner: this.deps.replicaId,
        request: { ...request, run_id: runId },
      });
      this.deps.log.info("run queued behind its session's runs", {
        tenant,
        run_id: runId,
        session_id: sessionId,
        attached,
      });
      // Subscribed once it is claimable: a replica may take it first; what it sent is filled in.
      const stream = attached
        ? await this.deps.attach(tenant, runId, { unstarted: true })
        : undefined;
      // The session's runs may have ended meanwhile.
      this.deps.queue.fill();
      return await this.#queuedAnswer(ids, stream);
    }
  }

  async #startNow(
    tenant: string,
    request: RunRequest,
    attached: boolean,
    link?: RunLink,
  ): Promise<StartedRun> {
    if (!this.deps.accepting()) throw runServiceErrors.shuttingDown();
    const sessionId = request.session_id ?? newId();
    const runId = request.run_id ?? newId();
    const ids = { tenant_id: tenant, session_id: sessionId, run_id: runId };
    // Kept on the run: a resumed attempt of an attached run knows whether its client's absence
    // cancels it (see client_grace.ts); a detached run has no client to wait for.
    if (!attached) request = { ...request, on_disconnect: null };
    const capped = await this.deps.queue.admit(tenant);
    if (capped || this.deps.queue.waits) {
      const reject = attached && this.deps.attachedAtCapacity === "reject" && this.deps.queue.full;
      if (reject) throw runServiceErrors.atCapacity();
      // Its start boundary is written like any run's (the session is its), then it waits for a
      // free slot of any replica, executed like a claimed run; an attached client listens first.
      await this.#begin(ids, request, link);
      const stream = attached ? await this.deps.attach(tenant, runId) : undefined;
      await this.deps.queue.enqueue(ids);
      return await this.#queuedAnswer(ids, stream);
    }
    const plan = await this.deps.queue.withSlot(() => this.#begin(ids, request, link));
    const active = newActiveRun(ids, 1, {
      attached: attached ? this.deps.delivery.attachedQueue() : undefined,
      ...(link ? { chain: link.origin_run_id } : {}),
    });
    this.deps.runner.active.set(runId, active);
    this.deps.log.info("run started", { tenant, run_id: runId, session_id: sessionId, attached });
    // Answered without waiting for the run's first events to reach its history: a stream that
    // resumes the running run before they do subscribes first and hears them live (stream.ts),
    // and the run's outcome is saved only once they are kept (runner.ts).
    active.done = this.deps.runner.drive(active, this.deps.runner.execute(plan, ids, active));
    return { run_id: runId, session_id: sessionId, events: active.attached };
  }

  /**
   * The answer for a run that waits in the run queue; an attached client's `stream` (subscribed
   * already) starts with `run_queued` and the queue's depth.
   */
  async #queuedAnswer(ids: RunIds, stream?: RunStream): Promise<StartedRun> {
    const queued = { run_id: ids.run_id, session_id: ids.session_id, queued: true };
    if (!stream) return queued;
    const depth = await this.deps.store.queueDepth().catch(() => null);
    return { ...queued, events: queuedEvents(ids, depth, stream) };
  }

  /**
   * Plans the run and writes its start boundary (session, run, input messages) in one
   * transaction. A conversation that changed between the plan and the write (a message added or
   * deleted meanwhile) is planned again; after `START_ATTEMPTS` the session counts as busy.
   */
  async #begin(ids: RunIds, request: RunRequest, link?: RunLink): Promise<EnginePlan> {
    for (let attempt = 1;; attempt++) {
      const plan = await this.deps.engine.prepare(ids, request);
      try {
        await this.deps.store.createRun(ids.tenant_id, {
          run_id: ids.run_id,
          session_id: ids.session_id,
          parent_checkpoint_id: plan.parent_checkpoint_id,
          owner: this.deps.replicaId,
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
}
