/**
 * The runs this replica executes: each driven through the engine until its outcome is saved and
 * delivered (`drive`), resumed as a new attempt when this replica claimed it (`resume`), stopped
 * here for a cancellation (`abortLocal`) or handed over (`handOff`). The run service starts
 * runs (starts.ts) and hands them to it.
 */
import { makeEvent, type RunEvent, type RunEventOf } from "../api/events.ts";
import type { Run, RunRequest } from "../api/schemas.ts";
import { type Engine, type EnginePlan, RunHandedOff, type RunIds } from "../engine/mod.ts";
import type { Logger } from "../log.ts";
import { type ClaimedRun, RunFenced, type Store } from "../store/mod.ts";
import type { ActiveRun } from "./active.ts";
import { passedOn, passOn, resumedActive, resumedRequest } from "./attempts.ts";
import type { ClientGrace } from "./client_grace.ts";
import type { Delivery } from "./delivery.ts";
import { finishedOf, outcomeOf, saveOutcome } from "./outcome.ts";

/** What the runner needs of the run service. */
export interface RunnerDeps {
  store: Store;
  engine: Engine;
  delivery: Delivery;
  log: Logger;
  /** The re-attach grace of a resumed attached run whose client went with the lost attempt. */
  clientGrace: ClientGrace;
  /** A slot may have freed: the run queue takes what waits (`RunQueue.fill`). */
  fill: () => void;
}

/** The runs this replica executes, by id. */
export class Runner {
  readonly active = new Map<string, ActiveRun>();
  /** Set when shutdown's grace is over: unsaved outcomes are not retried any more. */
  stopRetrying = false;

  constructor(private readonly deps: RunnerDeps) {}

  /** The engine's events of `plan`, executed as `active`'s attempt. */
  execute(plan: EnginePlan, ids: RunIds, active: ActiveRun): AsyncGenerator<RunEvent> {
    return this.deps.engine.execute(plan, ids, active.controller.signal, {
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
  async resume(claimed: ClaimedRun): Promise<void> {
    const ids = {
      tenant_id: claimed.tenant_id,
      session_id: claimed.session_id,
      run_id: claimed.run_id,
    };
    let request = resumedRequest(claimed);
    const active = resumedActive(claimed);
    this.active.set(claimed.run_id, active);
    let resolve!: () => void;
    active.done = new Promise<void>((r) => resolve = r);
    try {
      const chain = await this.deps.store.runChain(claimed.tenant_id, claimed.run_id);
      if (chain && chain.origin_run_id !== claimed.run_id) active.chain = chain.origin_run_id;
      active.seq = await this.deps.delivery.lastSeq(claimed.run_id);
      // An earlier attempt's events are in the history already.
      if (active.seq > 0) active.recorded.resolve();
      // Its attached client's connection went with the lost attempt: it has the grace to return.
      // (Attempt 1 is a queued run taken from the queue: its client is still listening.)
      if (claimed.attempt > 1 && request.on_disconnect === "cancel") {
        await this.deps.clientGrace.gone(ids.tenant_id, ids.run_id);
      }
      if (claimed.start_pending) {
        // Queued behind its session's runs: its start (its input) is written now.
        request = {
          ...(claimed.request as RunRequest),
          session_id: ids.session_id,
          run_id: ids.run_id,
        };
        const plan = await this.deps.engine.prepare(ids, request);
        await this.deps.store.beginQueued({
          ...ids,
          attempt: claimed.attempt,
          messages: plan.begin.messages ?? [],
          checkpoint: null,
          parent_checkpoint_id: plan.parent_checkpoint_id,
          request: { ...request, messages: [], resume_payload: null },
        });
        await this.drive(active, this.execute(plan, ids, active));
        return;
      }
      const plan = await this.deps.engine.prepare(ids, request);
      await this.drive(active, this.execute(plan, ids, active));
    } catch (err) {
      // Planned again it cannot run (the manifest changed, the store failed): it fails here.
      this.deps.log.error("could not resume run", { run_id: claimed.run_id, error: String(err) });
      await this.drive(active, (async function* () {})());
    } finally {
      resolve();
    }
  }

  /** Delivers the engine's events until `run_finished`, then saves and delivers the outcome. */
  async drive(active: ActiveRun, events: AsyncGenerator<RunEvent>): Promise<void> {
    let final: RunEventOf<"run_finished"> | undefined;
    try {
      for await (const event of events) {
        if (event.kind === "run_finished") {
          final = event;
          break;
        }
        const full = this.deps.delivery.deliver(active, event);
        if (full) await full;
      }
    } catch (err) {
      if (err instanceof RunFenced) active.reason = "fenced";
      else if (!(err instanceof RunHandedOff) && !passedOn(active)) {
        this.deps.log.error("engine failed", {
          tenant: active.tenant,
          run_id: active.run_id,
          error: String(err),
        });
      }
    }
    if (passedOn(active)) return await this.#passOn(active);
    const outcome = outcomeOf(active.reason, final);
    // A run the store says ended has a history to replay: its first events are kept first.
    if (active.seq > 0) await active.recorded.promise;
    let finished: RunEventOf<"run_finished">;
    let record: Run | undefined;
    try {
      const deps = {
        store: this.deps.store,
        log: this.deps.log,
        givingUp: () => this.stopRetrying,
      };
      const run = record = await saveOutcome(deps, active, outcome);
      // The outcome's write was fenced: the run was still this attempt's.
      active.leaseAt = performance.now();
      finished = finishedOf(run);
    } catch (err) {
      if (err instanceof RunFenced) {
        active.reason = "fenced";
        return await this.#passOn(active);
      }
      this.deps.log.error("could not persist run outcome", {
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
    await this.deps.delivery.deliver(active, finished);
    active.attached?.end();
    this.active.delete(active.run_id);
    this.deps.fill();
    // A failed run is worth a look: warn, with what went wrong (the message is scrubbed of
    // secrets where it was made, and by the logger again).
    this.deps.log[finished.status === "failed" ? "warn" : "info"]("run finished", {
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
  handOff(runId: string, reason: "handoff" | "fenced"): void {
    const active = this.active.get(runId);
    if (!active) return;
    active.reason = reason;
    if (!active.controller.signal.aborted) active.controller.abort(new RunHandedOff());
  }

  /** Ends this replica's part in a run another attempt goes on with (see attempts.ts). */
  async #passOn(active: ActiveRun): Promise<void> {
    await passOn(
      { store: this.deps.store, delivery: this.deps.delivery, log: this.deps.log },
      active,
    );
    this.active.delete(active.run_id);
    this.deps.fill();
  }

  /** Aborts the run if this replica executes it (a cancellation). */
  abortLocal(runId: string): void {
    const active = this.active.get(runId);
    if (!active || active.controller.signal.aborted) return;
    active.reason ??= "cancelled";
    active.controller.abort(new Error("cancelled"));
  }
}
