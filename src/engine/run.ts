// Over 400 lines: the ReAct graph is one state machine (steps, answers, resumes); its parts are beside it.
/**
 * The ReAct graph: a model step, then a tool step for the calls it made, until the model answers
 * without calls, a call must wait (interrupt), `max_steps` is reached, the model fails or the run
 * is cancelled. Every step ends with a checkpoint written with the step's messages in one
 * transaction (step_writer.ts); the last event is always `run_finished`. Server tools are called
 * by tool_call.ts; a failure becomes the run's error in run_error.ts.
 */
import type { Message, RunError, ToolCall } from "../api/schemas.ts";
import { ModelError } from "../models/mod.ts";
import type { Logger } from "../log.ts";
import type { Tool } from "../tools/mod.ts";
import { RunFenced } from "../store/mod.ts";
import { Answer } from "./answer.ts";
import { abortable, RunCancelled, RunHandedOff } from "./async.ts";
import { assistantMessage, messageText, toolMessage, toolResultValue } from "./conversation.ts";
import { makeEvent, type RunEvent, type RunEventPayloads } from "../api/events.ts";
import { errorDetail, internalError, runErrorOf } from "./run_error.ts";
import { OpenEvents } from "./open_events.ts";
import { loadStart } from "./start.ts";
import type { Context } from "./state.ts";
import { storeAnswer, streamStep } from "./model_step.ts";
import { RunReport } from "./report.ts";
import { StepTrace } from "./step_trace.ts";
import { StepWriter } from "./step_writer.ts";
import { SessionFull } from "./size.ts";
import { callServerTool } from "./tool_call.ts";
import type {
  EngineDeps,
  InterruptPayload,
  PendingToolCall,
  RunInput,
  RunOptions,
  RunResult,
  RunSetup,
  StartAnswer,
  StartState,
} from "./types.ts";

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

type Finish = Pick<RunEventPayloads["run_finished"], "status" | "interrupt_payload" | "result">;

/** The mutable state of one run while it executes. */
class Execution {
  private context: Context = null;
  private step: number;
  private modelSteps = 0;
  /** The conversation and its writes at step boundaries. */
  private readonly writes: StepWriter;
  /** Events opened and not yet closed, so a failure can close them before `run_finished`. */
  private readonly open = new OpenEvents();
  /** The assistant message of the model step in progress. */
  private partial: { message_id: string; answer: Answer } | null = null;
  /** The engine's logger with this run's ids on every line. */
  private readonly log: Logger;
  /** What the model reported, kept on the run record. */
  private readonly report: RunReport;
  /** What each step did and when (`GET /v1/runs/{id}/steps`). */
  private readonly trace: StepTrace;

  constructor(
    private readonly deps: EngineDeps,
    private readonly setup: RunSetup,
    private readonly input: RunInput,
    private readonly start: StartState,
    private readonly signal: AbortSignal,
    private readonly options: RunOptions,
  ) {
    this.step = start.step;
    // `max_steps` counts the run's model steps across attempts: a resumed attempt starts with
    // those the conversation already holds of it.
    if ((options.attempt ?? 1) > 1) {
      this.modelSteps = start.conversation.filter((m) =>
        m.run_id === input.run_id && m.role === "assistant"
      ).length;
    }
    // The conversation is the messages table (as read at the start), not the checkpoint: edits
    // made through the messages API between runs are what this run sees. The input is already
    // stored with the run record unless calls are answered first.
    this.writes = new StepWriter(
      deps,
      input,
      start.parent_checkpoint_id,
      [...start.conversation, ...start.input],
      { bytes: start.bytes, max: deps.config.manifest.runtime.max_session_bytes },
      options.attempt,
    );
    this.log = deps.log.with({
      tenant: input.tenant_id,
      run_id: input.run_id,
      session_id: input.session_id,
    });
    this.report = new RunReport(deps.store, input, setup.model, this.log, {
      attempt: options.attempt,
      price: setup.price,
    });
    this.trace = new StepTrace(deps.store, input.run_id, this.log, {
      attempt: options.attempt,
      requests: deps.config.manifest.runtime.record_model_requests ?? false,
      now: () => deps.clock?.now() ?? Date.now(),
    });
  }

  async *run(): AsyncGenerator<RunEvent> {
    const { session_id, run_id } = this.input;
    const attempt = this.options.attempt ?? 1;
    yield attempt > 1
      ? makeEvent("run_resumed", { session_id, run_id, attempt })
      : makeEvent("run_started", { session_id, run_id });
    let finish: Finish & { error: RunError | null };
    try {
      finish = { error: null, ...(yield* this.graph()) };
    } catch (error) {
      // Another attempt owns the run now (or will): nothing more is written or said here.
      if (error instanceof RunFenced || this.signal.reason instanceof RunHandedOff) throw error;
      yield* this.open.all();
      finish = await this.salvage(error);
    }
    const report = await this.report.totals();
    const last = this.writes.takeLast();
    if (this.options.finish) {
      this.options.finish(last);
    } else if (last) {
      try {
        await this.deps.store.commitStep(last);
      } catch (error) {
        this.log.error("could not save the last step of the run", { error: errorDetail(error) });
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

  /** The graph proper; returns how the run finished normally. */
  private async *graph(): AsyncGenerator<RunEvent, Finish & { error?: RunError }> {
    const { request } = this.input;

    this.context = request.context ?? this.start.context;
    if (request.context || this.start.input.length > 0) this.writes.dirty = true;

    const answers = this.start.answers;
    if (answers.length > 0) {
      // Calls a lost attempt left waiting for the client wait again: the run interrupts as the
      // lost attempt would have, before any model step.
      const waiting = yield* this.answerStep(answers);
      if (waiting.length > 0) {
        const payload: InterruptPayload = { reason: "tool_calls", pending: waiting };
        return { status: "interrupted", interrupt_payload: { ...payload }, result: null };
      }
      const used = new Set(
        answers.flatMap(({ answer }) => answer.kind === "input_message" ? [answer.index] : []),
      );
      const rest = request.messages.filter((_, i) => !used.has(i));
      if (rest.length > 0) {
        this.writes.add(rest);
        await this.writes.commit(null);
      }
    }
    yield makeEvent("messages_snapshot", { messages: [...this.writes.conversation] });
    if (this.context !== null) yield makeEvent("state_snapshot", { context: this.context });

    while (true) {
      if (this.signal.aborted) throw new RunCancelled();
      yield* this.steer();
      if (this.modelSteps >= this.setup.max_steps) {
        if (this.writes.dirty) await this.checkpoint([], true);
        const payload: InterruptPayload = {
          reason: "max_steps",
          max_steps: this.setup.max_steps,
        };
        return { status: "interrupted", interrupt_payload: { ...payload }, result: null };
      }
      const overBudget = await this.overBudget();
      if (overBudget) {
        if (this.writes.dirty) await this.checkpoint([], true);
        return { status: "failed", interrupt_payload: null, result: null, error: overBudget };
      }
      const turn = yield* this.modelStep();
      if (turn.calls.length === 0) {
        // Messages that joined while the model answered get an answer in this run too.
        if (yield* this.steer()) continue;
        const result: RunResult = { text: turn.text, context: this.context };
        return { status: "completed", interrupt_payload: null, result };
      }
      const pending = yield* this.toolStep(turn.calls);
      if (pending.length > 0) {
        const payload: InterruptPayload = { reason: "tool_calls", pending };
        return { status: "interrupted", interrupt_payload: { ...payload }, result: null };
      }
    }
  }

  /**
   * The run's error when its model steps (earlier attempts' included) used more tokens than its
   * budget; null while within it or without one.
   */
  private async overBudget(): Promise<RunError | null> {
    const budget = this.setup.token_budget;
    if (budget === null) return null;
    const { usage } = await this.report.totals();
    const used = (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0);
    if (used <= budget) return null;
    return {
      code: "token_budget_exceeded",
      message: `the run used ${used} tokens, more than its budget of ${budget}`,
    };
  }

  /**
   * At a step boundary: takes the messages other requests sent to the run meanwhile (steer) into
   * its conversation, written by the store as they are taken; true when there were any.
   */
  private async *steer(): AsyncGenerator<RunEvent, boolean> {
    if (!this.options.steered?.()) return false;
    await this.writes.flushLast();
    const messages = await this.deps.store.takeSteering({
      tenant_id: this.input.tenant_id,
      session_id: this.input.session_id,
      run_id: this.input.run_id,
      ...(this.options.attempt !== undefined ? { attempt: this.options.attempt } : {}),
    });
    if (messages.length === 0) return false;
    this.writes.adopt(messages);
    this.log.info("steering messages joined the run", { messages: messages.length });
    yield makeEvent("messages_added", { messages });
    return true;
  }

  /**
   * A tools step that answers the calls a previous run (or attempt) left open; returns the calls
   * that wait for the client again (see `closeIncomplete`).
   */
  private async *answerStep(
    answers: StartAnswer[],
  ): AsyncGenerator<RunEvent, PendingToolCall[]> {
    yield* this.beginStep("tools");
    const waiting: PendingToolCall[] = [];
    for (const { call, answer } of answers) {
      if (this.signal.aborted) throw new RunCancelled();
      switch (answer.kind) {
        case "result":
          yield* this.writeResult(call.id, answer.result, answer.is_error);
          break;
        case "input_message": {
          const message = this.input.request.messages[answer.index];
          const [saved] = this.writes.add([message]);
          yield this.resultEvent(saved, partValue(saved), false);
          break;
        }
        case "approved": {
          const tool = this.setup.server_tools.get(call.name);
          if (tool) yield* this.runServerTool(call, tool);
          else yield* this.writeResult(call.id, `the tool '${call.name}' is not available`, true);
          break;
        }
        case "rejected":
          yield* this.writeResult(
            call.id,
            {
              error: "the user rejected this tool call",
              ...(answer.reason ? { reason: answer.reason } : {}),
            },
            true,
            false,
          );
          break;
        case "unanswered":
          yield* this.writeResult(call.id, "the user continued without answering this call", true);
          break;
        case "incomplete": {
          const again = yield* this.closeIncomplete(call);
          if (again) waiting.push(again);
          break;
        }
      }
    }
    // A step that leaves calls pending is the run's last. The step's record is written beside
    // its checkpoint (one group commit on SQLite).
    await Promise.all([this.checkpoint(waiting, waiting.length > 0), this.trace.end()]);
    yield* this.open.stepFinished();
    return waiting;
  }

  /**
   * A call without a result. Made by this run, an earlier attempt was lost before it got one: a
   * client tool call or one that needs approval never ran and waits for the client again
   * (returned); a server tool in flight runs again when idempotent, any other gets an error
   * result (the model decides). Made by an earlier run, that run ended before it.
   */
  private async *closeIncomplete(call: ToolCall): AsyncGenerator<RunEvent, PendingToolCall | null> {
    const ours = (this.options.attempt ?? 1) > 1 &&
      this.writes.conversation.some((m) =>
        m.run_id === this.input.run_id && m.tool_calls?.some((c) => c.id === call.id)
      );
    if (!ours) {
      yield* this.writeResult(call.id, "the run that made this call ended before it", true);
      return null;
    }
    const tool = this.setup.server_tools.get(call.name);
    const waiting = { tool_call_id: call.id, tool_name: call.name, arguments: call.arguments };
    if (tool?.requires_approval) return { ...waiting, kind: "approval" };
    if (!tool && this.setup.client_tools.has(call.name)) return { ...waiting, kind: "client_tool" };
    if (tool?.idempotent) {
      this.log.info("tool call re-run after a lost attempt", { tool_call_id: call.id });
      yield* this.runServerTool(call, tool);
      await this.writes.save();
    } else {
      yield* this.writeResult(call.id, "interrupted: it may or may not have run", true);
    }
    return null;
  }

  /** One model step: streams the model's answer and persists it once complete. */
  private async *modelStep(): AsyncGenerator<RunEvent, { text: string; calls: ToolCall[] }> {
    yield* this.beginStep("model");
    this.modelSteps++;
    const message_id = crypto.randomUUID();
    const answer = new Answer();
    this.partial = { message_id, answer };
    const stream = await abortable(
      this.deps.models.open(this.setup.model, {
        system: this.setup.system,
        messages: [...this.writes.conversation],
        tools: this.setup.model_tools,
      }, this.signal),
      this.signal,
    );

    const step = yield* streamStep(this.trace.model(stream), {
      open: this.open,
      answer,
      message_id,
      signal: this.signal,
      showReasoning: this.setup.show_reasoning,
    });
    const { calls, finish } = step;
    await this.report.step(this.step, finish, step.warnings);
    // A source that just stops on abort must not pass for a complete answer.
    if (this.signal.aborted) throw new RunCancelled();
    yield* this.open.textEnd();
    // Calls the stream started but never completed cannot be run; close their events.
    yield* this.open.callsEnd();

    const text = answer.text;
    this.partial = null;
    yield* storeAnswer(this.writes, message_id, answer, step);
    // A step without calls is the run's last.
    await Promise.all([this.checkpoint([], calls.length === 0), this.trace.end()]);
    yield* this.open.stepFinished();
    return { text, calls };
  }

  /** One tool step: runs the server tools it may, and returns the calls that must wait. */
  private async *toolStep(calls: ToolCall[]): AsyncGenerator<RunEvent, PendingToolCall[]> {
    yield* this.beginStep("tools");
    const pending: PendingToolCall[] = [];
    for (const call of calls) {
      if (this.signal.aborted) throw new RunCancelled();
      const server = this.setup.server_tools.get(call.name);
      const waiting = { tool_call_id: call.id, tool_name: call.name, arguments: call.arguments };
      if (server && !server.requires_approval) {
        yield* this.runServerTool(call, server);
        // Saved at once: a completed call is never run twice, whatever happens to this replica.
        await this.writes.save();
      } else if (server) {
        pending.push({ ...waiting, kind: "approval" });
      } else if (this.setup.client_tools.has(call.name)) {
        pending.push({ ...waiting, kind: "client_tool" });
      } else {
        yield* this.writeResult(call.id, `the tool '${call.name}' is not available`, true);
      }
    }
    // A step that leaves calls pending is the run's last.
    await Promise.all([this.checkpoint(pending, pending.length > 0), this.trace.end()]);
    yield* this.open.stepFinished();
    return pending;
  }

  /** Calls a server tool, yielding its emits live, then its result and state change. */
  private async *runServerTool(call: ToolCall, tool: Tool): AsyncGenerator<RunEvent> {
    const scope = { ids: this.input, context: this.context, signal: this.signal, log: this.log };
    const { result, is_error, change } = yield* this.trace.tool(
      call,
      callServerTool(tool, call, scope),
    );
    if (change) {
      this.context = change.context;
      this.writes.dirty = true;
    }
    yield* this.writeResult(call.id, result, is_error);
    // Made after the result, so their timestamps follow it.
    if (change) yield* change.events();
  }

  /** Persists a tool message answering `toolCallId` and yields its `tool_call_result`. */
  private async *writeResult(
    toolCallId: string,
    result: unknown,
    isError: boolean,
    wrap = true,
  ): AsyncGenerator<RunEvent> {
    const value = wrap ? toolResultValue(result, isError) : result;
    const [saved] = this.writes.add([toolMessage(toolCallId, value)]);
    yield this.resultEvent(saved, value, isError);
  }

  private resultEvent(message: Message, content: unknown, isError: boolean): RunEvent {
    return makeEvent("tool_call_result", {
      tool_call_id: message.tool_call_id!,
      message_id: message.message_id,
      content,
      is_error: isError,
    });
  }

  /** Ends a failed or cancelled run: keeps what completed and says how it finished. */
  private async salvage(error: unknown): Promise<Finish & { error: RunError | null }> {
    const cancelled = this.signal.aborted || error instanceof RunCancelled;
    // Nothing to report for a cancellation: it is the client's own doing.
    const runError = cancelled ? null : runErrorOf(error, this.log);
    // The step it ended in is kept as far as it went, with the error.
    this.trace.fail(runError, error);
    await this.trace.end();

    // An internal error may be the store itself; only model failures and cancellations end with
    // a checkpoint. Messages the failed step completed are kept either way.
    if (cancelled || error instanceof ModelError) {
      try {
        const partial = this.partial;
        this.partial = null;
        if (partial?.answer.text) {
          const message = assistantMessage(partial.message_id, partial.answer.parts(), []);
          // A cut answer that would not fit is dropped; the checkpoint is still written.
          try {
            this.writes.add([message]);
          } catch (full) {
            if (!(full instanceof SessionFull)) throw full;
          }
        }
        if (this.writes.dirty) await this.checkpoint([], true);
      } catch (persistError) {
        this.log.error("could not save the state of a failed run", {
          error: errorDetail(persistError),
        });
      }
    } else {
      this.writes.keepUnsavedAsLast();
    }
    return {
      status: cancelled ? "cancelled" : "failed",
      interrupt_payload: null,
      result: null,
      error: runError,
    };
  }

  private async *beginStep(step_name: "model" | "tools"): AsyncGenerator<RunEvent> {
    this.step++;
    this.trace.begin(this.step, step_name, step_name === "model" ? this.setup.model : undefined);
    yield this.open.stepStarted(this.step, step_name);
  }

  /** Ends a step with a checkpoint of the run's context and step (see `StepWriter`). */
  private checkpoint(pending: PendingToolCall[], last: boolean): Promise<void> {
    return this.writes.checkpoint({ context: this.context, step: this.step }, pending, last);
  }
}

/** What a client-written tool message says: its one data part's value, or its text. */
function partValue(message: Message): unknown {
  const [first] = message.content;
  return message.content.length === 1 && first.type === "data" ? first.value : messageText(message);
}
