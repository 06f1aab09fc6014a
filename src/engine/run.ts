/**
 * A run's setup and outcome: `runAgent` makes the parts one run works with (its conversation
 * writer, open events, report, step trace), says `run_started` (or `run_resumed`), runs the step
 * loop (step_loop.ts: model steps, tool steps, steering), and ends with `run_finished`, the last
 * event always. A failure becomes the run's error in run_error.ts; what completed is kept.
 */
import type { RunError } from "../api/schemas.ts";
import { ModelError } from "../models/mod.ts";
import { RunFenced } from "../store/mod.ts";
import { RunCancelled, RunHandedOff } from "./async.ts";
import { assistantMessage } from "./conversation.ts";
import { makeEvent, type RunEvent } from "../api/events.ts";
import { errorDetail, internalError, runErrorOf } from "./run_error.ts";
import { OpenEvents } from "./open_events.ts";
import { loadStart } from "./start.ts";
import { RunReport } from "./report.ts";
import { type Finish, type RunParts, StepLoop } from "./step_loop.ts";
import { StepTrace } from "./step_trace.ts";
import { StepWriter } from "./step_writer.ts";
import { SessionFull } from "./size.ts";
import type { EngineDeps, RunInput, RunOptions, RunSetup, StartState } from "./types.ts";

/**
 * Runs the agent in a run record that exists (created with the start state's `begin` writes) and
 * yields its events; the last one is always `run_finished`. Every step but the last commits its
 * messages and checkpoint in one `Store.commitStep`; the last one goes to `options.finish` when
 * given (the run service commits it with the outcome), else it is committed here.
 */
export async function* runAgent(
  deps: EngineDeps,
  setup: RunSetup,
  input: RunInput,
  signal: AbortSignal,
  options: RunOptions = {},
): AsyncGenerator<RunEvent> {
  // Normally loaded by the run service before it creates the run; loading here still throws its
  // refusals (`EngineError`) before the first event.
  const start = input.start ?? await loadStart(deps, setup, input);
  yield* new Execution(deps, setup, input, start, signal, options).run();
}

/** One run from its first event to its last. */
class Execution {
  private readonly parts: RunParts;
  private readonly loop: StepLoop;

  constructor(
    deps: EngineDeps,
    setup: RunSetup,
    input: RunInput,
    start: StartState,
    signal: AbortSignal,
    options: RunOptions,
  ) {
    // The conversation is the messages table (as read at the start), not the checkpoint: edits
    // made through the messages API between runs are what this run sees. The input is already
    // stored with the run record unless calls are answered first.
    const writes = new StepWriter(
      deps,
      input,
      start.parent_checkpoint_id,
      [...start.conversation, ...start.input],
      { bytes: start.bytes, max: deps.config.manifest.runtime.max_session_bytes },
      options.attempt,
    );
    const log = deps.log.with({
      tenant: input.tenant_id,
      run_id: input.run_id,
      session_id: input.session_id,
    });
    const report = new RunReport(deps.store, input, setup.model, log, {
      attempt: options.attempt,
      price: setup.price,
    });
    const trace = new StepTrace(deps.store, input.run_id, log, {
      attempt: options.attempt,
      requests: deps.config.manifest.runtime.record_model_requests ?? false,
      now: () => deps.clock?.now() ?? Date.now(),
    });
    const open = new OpenEvents();
    this.parts = { deps, setup, input, start, signal, options, writes, open, log, report, trace };
    this.loop = new StepLoop(this.parts);
  }

  async *run(): AsyncGenerator<RunEvent> {
    const { deps, input, options, signal, open, writes, log } = this.parts;
    const { session_id, run_id } = input;
    const attempt = options.attempt ?? 1;
    yield attempt > 1
      ? makeEvent("run_resumed", { session_id, run_id, attempt })
      : makeEvent("run_started", { session_id, run_id });
    let finish: Finish & { error: RunError | null };
    try {
      finish = { error: null, ...(yield* this.loop.run()) };
    } catch (error) {
      // Another attempt owns the run now (or will): nothing more is written or said here.
      if (error instanceof RunFenced || signal.reason instanceof RunHandedOff) throw error;
      yield* open.all();
      finish = await this.salvage(error);
    }
    const report = await this.parts.report.totals();
    const last = writes.takeLast();
    if (options.finish) {
      options.finish(last);
    } else if (last) {
      try {
        await deps.store.commitStep(last);
      } catch (error) {
        log.error("could not save the last step of the run", { error: errorDetail(error) });
        finish = {
          status: "failed",
          interrupt_payload: null,
          result: null,
          error: internalError(),
        };
      }
    }
    yield makeEvent("run_finished", { session_id, run_id, ...finish, ...report });
  }

  /** Ends a failed or cancelled run: keeps what completed and says how it finished. */
  private async salvage(error: unknown): Promise<Finish & { error: RunError | null }> {
    const { signal, log, trace, writes } = this.parts;
    const cancelled = signal.aborted || error instanceof RunCancelled;
    // Nothing to report for a cancellation: it is the client's own doing.
    const runError = cancelled ? null : runErrorOf(error, log);
    // The step it ended in is kept as far as it went, with the error.
    trace.fail(runError, error);
    await trace.end();

    // An internal error may be the store itself; only model failures and cancellations end with
    // a checkpoint. Messages the failed step completed are kept either way.
    if (cancelled || error instanceof ModelError) {
      try {
        const partial = this.loop.takePartial();
        if (partial?.answer.text) {
          const message = assistantMessage(partial.message_id, partial.answer.parts(), []);
          // A cut answer that would not fit is dropped; the checkpoint is still written.
          try {
            writes.add([message]);
          } catch (full) {
            if (!(full instanceof SessionFull)) throw full;
          }
        }
        if (writes.dirty) await this.loop.checkpoint([], true);
      } catch (persistError) {
        log.error("could not save the state of a failed run", {
          error: errorDetail(persistError),
        });
      }
    } else {
      writes.keepUnsavedAsLast();
    }
    return {
      status: cancelled ? "cancelled" : "failed",
      interrupt_payload: null,
      result: null,
      error: runError,
    };
  }
}
