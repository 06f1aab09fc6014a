/**
 * The ReAct graph's step loop: a model step, then a tool step for the calls it made, until the
 * model answers without calls, a call must wait (interrupt), `max_steps` or the token budget is
 * reached. At each step boundary it takes the steering messages sent meanwhile; every step ends
 * with a checkpoint written with the step's messages (step_writer.ts). Server tools are called by
 * tool_call.ts. The run's setup and outcome (`run_started`, failures, `run_finished`) are run.ts's.
 */
import type { Message, RunError, ToolCall } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { Tool } from "../tools/mod.ts";
import { Answer } from "./answer.ts";
import { abortable, RunCancelled } from "./async.ts";
import { messageText, toolMessage, toolResultValue } from "./conversation.ts";
import { makeEvent, type RunEvent, type RunEventPayloads } from "../api/events.ts";
import type { OpenEvents } from "./open_events.ts";
import type { Context } from "./state.ts";
import { storeAnswer, streamStep } from "./model_step.ts";
import type { RunReport } from "./report.ts";
import type { StepTrace } from "./step_trace.ts";
import type { StepWriter } from "./step_writer.ts";
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
import { newId } from "../ids.ts";

/** How a run finished: `run_finished`'s outcome fields. */
export type Finish = Pick<
  RunEventPayloads["run_finished"],
  "status" | "interrupt_payload" | "result"
>;

/** What the step loop works with, made by run.ts for one run. */
export interface RunParts {
  deps: EngineDeps;
  setup: RunSetup;
  input: RunInput;
  start: StartState;
  signal: AbortSignal;
  options: RunOptions;
  /** The conversation and its writes at step boundaries. */
  writes: StepWriter;
  /** Events opened and not yet closed, so a failure can close them before `run_finished`. */
  open: OpenEvents;
  /** The engine's logger with this run's ids on every line. */
  log: Logger;
  /** What the model reported, kept on the run record. */
  report: RunReport;
  /** What each step did and when (`GET /v1/runs/{id}/steps`). */
  trace: StepTrace;
}

/** The assistant message of a model step in progress. */
export interface PartialAnswer {
  message_id: string;
  answer: Answer;
}

/** The steps of one run and the state they change. */
export class StepLoop {
  private context: Context = null;
  private step: number;
  private modelSteps = 0;
  /** The assistant message of the model step in progress. */
  private partial: PartialAnswer | null = null;

  constructor(private readonly parts: RunParts) {
    const { start, input, options } = parts;
    this.step = start.step;
    // `max_steps` counts the run's model steps across attempts: a resumed attempt starts with
    // those the conversation already holds of it.
    if ((options.attempt ?? 1) > 1) {
      this.modelSteps = start.conversation.filter((m) =>
        m.run_id === input.run_id && m.role === "assistant"
      ).length;
    }
  }

  /** The model step's answer cut short by a failure, if any; taken once. */
  takePartial(): PartialAnswer | null {
    const partial = this.partial;
    this.partial = null;
    return partial;
  }

  /** The loop proper; returns how the run finished normally. */
  async *run(): AsyncGenerator<RunEvent, Finish & { error?: RunError }> {
    const { input: { request }, start, writes, setup, signal } = this.parts;

    this.context = request.context ?? start.context;
    if (request.context || start.input.length > 0) writes.dirty = true;

    const answers = start.answers;
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
        writes.add(rest);
        await writes.commit(null);
      }
    }
    yield makeEvent("messages_snapshot", { messages: [...writes.conversation] });
    if (this.context !== null) yield makeEvent("state_snapshot", { context: this.context });

    while (true) {
      if (signal.aborted) throw new RunCancelled();
      yield* this.steer();
      if (this.modelSteps >= setup.max_steps) {
        if (writes.dirty) await this.checkpoint([], true);
        const payload: InterruptPayload = {
          reason: "max_steps",
          max_steps: setup.max_steps,
        };
        return { status: "interrupted", interrupt_payload: { ...payload }, result: null };
      }
      const overBudget = await this.overBudget();
      if (overBudget) {
        if (writes.dirty) await this.checkpoint([], true);
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
    const budget = this.parts.setup.token_budget;
    if (budget === null) return null;
    const { usage } = await this.parts.report.totals();
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
    if (!this.parts.options.steered?.()) return false;
    await this.parts.writes.flushLast();
    const messages = await this.parts.deps.store.takeSteering({
      tenant_id: this.parts.input.tenant_id,
      session_id: this.parts.input.session_id,
      run_id: this.parts.input.run_id,
      ...(this.parts.options.attempt !== undefined ? { attempt: this.parts.options.attempt } : {}),
    });
    if (messages.length === 0) return false;
    this.parts.writes.adopt(messages);
    this.parts.log.info("steering messages joined the run", { messages: messages.length });
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
      if (this.parts.signal.aborted) throw new RunCancelled();
      switch (answer.kind) {
        case "result":
          yield* this.writeResult(call.id, answer.result, answer.is_error);
          break;
        case "input_message": {
          const message = this.parts.input.request.messages[answer.index];
          const [saved] = this.parts.writes.add([message]);
          yield this.resultEvent(saved, partValue(saved), false);
          break;
        }
        case "approved": {
          const tool = this.parts.setup.server_tools.get(call.name);
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
    await Promise.all([this.checkpoint(waiting, waiting.length > 0), this.parts.trace.end()]);
    yield* this.parts.open.stepFinished();
    return waiting;
  }

  /**
   * A call without a result. Made by this run, an earlier attempt was lost before it got one: a
   * client tool call or one that needs approval never ran and waits for the client again
   * (returned); a server tool in flight runs again when idempotent, any other gets an error
   * result (the model decides). Made by an earlier run, that run ended before it.
   */
  private async *closeIncomplete(call: ToolCall): AsyncGenerator<RunEvent, PendingToolCall | null> {
    const ours = (this.parts.options.attempt ?? 1) > 1 &&
      this.parts.writes.conversation.some((m) =>
        m.run_id === this.parts.input.run_id && m.tool_calls?.some((c) => c.id === call.id)
      );
    if (!ours) {
      yield* this.writeResult(call.id, "the run that made this call ended before it", true);
      return null;
    }
    const { server_tools, client_tools } = this.parts.setup;
    const tool = server_tools.get(call.name);
    const waiting = { tool_call_id: call.id, tool_name: call.name, arguments: call.arguments };
    if (tool?.requires_approval) return { ...waiting, kind: "approval" };
    if (!tool && client_tools.has(call.name)) return { ...waiting, kind: "client_tool" };
    if (tool?.idempotent) {
      this.parts.log.info("tool call re-run after a lost attempt", { tool_call_id: call.id });
      yield* this.runServerTool(call, tool);
      await this.parts.writes.save();
    } else {
      yield* this.writeResult(call.id, "interrupted: it may or may not have run", true);
    }
    return null;
  }

  /** One model step: streams the model's answer and persists it once complete. */
  private async *modelStep(): AsyncGenerator<RunEvent, { text: string; calls: ToolCall[] }> {
    yield* this.beginStep("model");
    this.modelSteps++;
    const message_id = newId();
    const answer = new Answer();
    this.partial = { message_id, answer };
    const stream = await abortable(
      this.parts.deps.models.open(this.parts.setup.model, {
        system: this.parts.setup.system,
        messages: [...this.parts.writes.conversation],
        tools: this.parts.setup.model_tools,
      }, this.parts.signal),
      this.parts.signal,
    );

    const step = yield* streamStep(this.parts.trace.model(stream), {
      open: this.parts.open,
      answer,
      message_id,
      signal: this.parts.signal,
      showReasoning: this.parts.setup.show_reasoning,
    });
    const { calls, finish } = step;
    await this.parts.report.step(this.step, finish, step.warnings);
    // A source that just stops on abort must not pass for a complete answer.
    if (this.parts.signal.aborted) throw new RunCancelled();
    yield* this.parts.open.textEnd();
    // Calls the stream started but never completed cannot be run; close their events.
    yield* this.parts.open.callsEnd();

    const text = answer.text;
    this.partial = null;
    yield* storeAnswer(this.parts.writes, message_id, answer, step);
    // A step without calls is the run's last.
    await Promise.all([this.checkpoint([], calls.length === 0), this.parts.trace.end()]);
    yield* this.parts.open.stepFinished();
    return { text, calls };
  }

  /** One tool step: runs the server tools it may, and returns the calls that must wait. */
  private async *toolStep(calls: ToolCall[]): AsyncGenerator<RunEvent, PendingToolCall[]> {
    yield* this.beginStep("tools");
    const pending: PendingToolCall[] = [];
    for (const call of calls) {
      if (this.parts.signal.aborted) throw new RunCancelled();
      const server = this.parts.setup.server_tools.get(call.name);
      const waiting = { tool_call_id: call.id, tool_name: call.name, arguments: call.arguments };
      if (server && !server.requires_approval) {
        yield* this.runServerTool(call, server);
        // Saved at once: a completed call is never run twice, whatever happens to this replica.
        await this.parts.writes.save();
      } else if (server) {
        pending.push({ ...waiting, kind: "approval" });
      } else if (this.parts.setup.client_tools.has(call.name)) {
        pending.push({ ...waiting, kind: "client_tool" });
      } else {
        yield* this.writeResult(call.id, `the tool '${call.name}' is not available`, true);
      }
    }
    // A step that leaves calls pending is the run's last.
    await Promise.all([this.checkpoint(pending, pending.length > 0), this.parts.trace.end()]);
    yield* this.parts.open.stepFinished();
    return pending;
  }

  /** Calls a server tool, yielding its emits live, then its result and state change. */
  private async *runServerTool(call: ToolCall, tool: Tool): AsyncGenerator<RunEvent> {
    const { input, signal, log } = this.parts;
    const scope = { ids: input, context: this.context, signal, log };
    const { result, is_error, change } = yield* this.parts.trace.tool(
      call,
      callServerTool(tool, call, scope),
    );
    if (change) {
      this.context = change.context;
      this.parts.writes.dirty = true;
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
    const [saved] = this.parts.writes.add([toolMessage(toolCallId, value)]);
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

  private async *beginStep(step_name: "model" | "tools"): AsyncGenerator<RunEvent> {
    this.step++;
    const { trace, setup, open } = this.parts;
    trace.begin(this.step, step_name, step_name === "model" ? setup.model : undefined);
    yield open.stepStarted(this.step, step_name);
  }

  /** Ends a step with a checkpoint of the run's context and step (see `StepWriter`). */
  checkpoint(pending: PendingToolCall[], last: boolean): Promise<void> {
    return this.parts.writes.checkpoint({ context: this.context, step: this.step }, pending, last);
  }
}

/** What a client-written tool message says: its one data part's value, or its text. */
function partValue(message: Message): unknown {
  const [first] = message.content;
  return message.content.length === 1 && first.type === "data" ? first.value : messageText(message);
}
