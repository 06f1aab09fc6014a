/**
 * The ReAct graph: a model step, then a tool step for the calls it made, until the model answers
 * without calls, a call must wait (interrupt), `max_steps` is reached, the model fails or the run
 * is cancelled. Every step ends with a checkpoint; the last event is always `run_finished`.
 */
import type { Message, MessageInput, RunError, ToolCall } from "../api/schemas.ts";
import { ModelError } from "../models/types.ts";
import type { Logger } from "../log.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "../tools/types.ts";
import { abortable, abortableIter, RunCancelled, withPushes } from "./async.ts";
import {
  assistantMessage,
  messageText,
  toolMessage,
  toolResultValue,
  unansweredToolCalls,
} from "./conversation.ts";
import { makeEvent, type RunEvent, type RunEventPayloads } from "./events.ts";
import { loadStart } from "./start.ts";
import { applyStateUpdate, type Context } from "./state.ts";
import type {
  EngineDeps,
  InterruptPayload,
  PendingAnswer,
  PendingToolCall,
  PreparedRun,
  RunInput,
  RunResult,
  StartState,
} from "./types.ts";

/** Runs the agent and yields its events; the last one is always `run_finished`. */
export async function* runAgent(
  deps: EngineDeps,
  prepared: PreparedRun,
  input: RunInput,
  signal: AbortSignal,
): AsyncGenerator<RunEvent> {
  // Normally loaded by the run service before it creates the run; loading here still throws its
  // 404/422 before the first event.
  const start = input.start ?? await loadStart(deps, prepared, input);
  yield* new Execution(deps, prepared, input, start, signal).run();
}

type Finish = Pick<RunEventPayloads["run_finished"], "status" | "interrupt_payload" | "result">;

/** A tool call answered at the start of a run, with how it is answered. */
type StartAnswer = { call: ToolCall; answer: PendingAnswer | { kind: "incomplete" } };

/** The mutable state of one run while it executes. */
class Execution {
  private conversation: Message[] = [];
  private context: Context = null;
  private parent: string | null;
  private step: number;
  private modelSteps = 0;
  /** Messages or context changed since the last checkpoint. */
  private dirty = false;
  /** Events opened and not yet closed, so a failure can close them before `run_finished`. */
  private open: {
    step: { step: number; step_name: "model" | "tools" } | null;
    text: string | null;
    calls: Set<string>;
  } = { step: null, text: null, calls: new Set() };
  /** The assistant message of the model step in progress. */
  private partial: { message_id: string; text: string } | null = null;
  /** The engine's logger with this run's ids on every line. */
  private readonly log: Logger;

  constructor(
    private readonly deps: EngineDeps,
    private readonly prepared: PreparedRun,
    private readonly input: RunInput,
    private readonly start: StartState,
    private readonly signal: AbortSignal,
  ) {
    this.parent = start.parent_checkpoint_id;
    this.step = start.step;
    this.log = deps.log.with({
      tenant: input.tenant_id,
      run_id: input.run_id,
      session_id: input.session_id,
    });
  }

  async *run(): AsyncGenerator<RunEvent> {
    const { session_id, run_id } = this.input;
    yield makeEvent("run_started", { session_id, run_id });
    let finish: Finish & { error: RunError | null };
    try {
      finish = { ...(yield* this.graph()), error: null };
    } catch (error) {
      yield* this.closeOpen();
      finish = await this.salvage(error);
    }
    yield makeEvent("run_finished", { session_id, run_id, ...finish });
  }

  /** The graph proper; returns how the run finished normally. */
  private async *graph(): AsyncGenerator<RunEvent, Finish> {
    const { store } = this.deps;
    const { tenant_id, session_id, request } = this.input;

    if (this.start.fork) {
      await store.replaceMessages(tenant_id, session_id, this.start.fork_messages!);
    }
    // The conversation is the messages table, not the checkpoint: edits made through the messages
    // API between runs are what this run sees.
    this.conversation = await store.allMessages(tenant_id, session_id);
    this.context = request.context ?? this.start.context;
    if (request.context) this.dirty = true;

    const usedInputs = new Set<number>();
    const answers = this.startAnswers(usedInputs);
    if (answers.length > 0) yield* this.answerStep(answers);

    const rest = request.messages.filter((_, i) => !usedInputs.has(i));
    if (rest.length > 0) await this.persist(rest);
    yield makeEvent("messages_snapshot", { messages: [...this.conversation] });
    if (this.context !== null) yield makeEvent("state_snapshot", { context: this.context });

    while (true) {
      if (this.signal.aborted) throw new RunCancelled();
      if (this.modelSteps >= this.prepared.max_steps) {
        if (this.dirty) await this.checkpoint([]);
        const payload: InterruptPayload = {
          reason: "max_steps",
          max_steps: this.prepared.max_steps,
        };
        return { status: "interrupted", interrupt_payload: { ...payload }, result: null };
      }
      const turn = yield* this.modelStep();
      if (turn.calls.length === 0) {
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
   * The tool calls of the conversation that need an answer before the model runs again, in
   * conversation order: the start checkpoint's pending calls with their answers, and calls left
   * unfinished by a run that was cancelled or lost (closed as incomplete).
   */
  private startAnswers(usedInputs: Set<number>): StartAnswer[] {
    const pending = new Map(this.start.pending.map((p) => [p.call.tool_call_id, p.answer]));
    return unansweredToolCalls(this.conversation).map((call) => {
      const answer = pending.get(call.id) ?? { kind: "incomplete" as const };
      if (answer.kind === "input_message") usedInputs.add(answer.index);
      return { call, answer };
    });
  }

  /** A tools step that answers the calls a previous run left open. */
  private async *answerStep(answers: StartAnswer[]): AsyncGenerator<RunEvent> {
    yield* this.beginStep("tools");
    for (const { call, answer } of answers) {
      if (this.signal.aborted) throw new RunCancelled();
      switch (answer.kind) {
        case "result":
          yield* this.writeResult(call.id, answer.result, answer.is_error);
          break;
        case "input_message": {
          const message = this.input.request.messages[answer.index];
          const [saved] = await this.persist([message]);
          yield this.resultEvent(saved, partValue(saved), false);
          break;
        }
        case "approved": {
          const tool = this.prepared.server_tools.get(call.name);
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
        case "incomplete":
          yield* this.writeResult(call.id, "the run that made this call ended before it", true);
          break;
      }
    }
    await this.checkpoint([]);
    yield* this.endStep();
  }

  /** One model step: streams the model's answer and persists it once complete. */
  private async *modelStep(): AsyncGenerator<RunEvent, { text: string; calls: ToolCall[] }> {
    yield* this.beginStep("model");
    this.modelSteps++;
    const message_id = crypto.randomUUID();
    this.partial = { message_id, text: "" };
    const stream = await abortable(
      this.deps.models.open(this.prepared.model, {
        system: this.prepared.system,
        messages: [...this.conversation],
        tools: this.prepared.model_tools,
      }, this.signal),
      this.signal,
    );

    const calls: ToolCall[] = [];
    /** Started calls, and whether their arguments were streamed as deltas. */
    const started = new Map<string, { streamed: boolean }>();
    const startCall = (id: string, name: string): RunEvent => {
      started.set(id, { streamed: false });
      this.open.calls.add(id);
      return makeEvent("tool_call_start", {
        tool_call_id: id,
        tool_name: name,
        parent_message_id: message_id,
      });
    };

    for await (const ev of abortableIter(stream.events, this.signal)) {
      switch (ev.type) {
        case "text-delta":
          if (!ev.delta) break;
          if (this.open.text === null) {
            this.open.text = message_id;
            yield makeEvent("text_message_start", { message_id, role: "assistant" });
          }
          this.partial.text += ev.delta;
          yield makeEvent("text_message_content", { message_id, delta: ev.delta });
          break;
        case "tool-call-start":
          yield* this.closeText();
          if (!started.has(ev.id)) yield startCall(ev.id, ev.name);
          break;
        case "tool-call-delta": {
          // Without a start the name is unknown; the arguments then go out whole with `tool-call`.
          const s = started.get(ev.id);
          if (!s || !ev.delta) break;
          s.streamed = true;
          yield makeEvent("tool_call_args", { tool_call_id: ev.id, delta: ev.delta });
          break;
        }
        case "tool-call": {
          yield* this.closeText();
          if (!started.has(ev.id)) yield startCall(ev.id, ev.name);
          if (!started.get(ev.id)!.streamed) {
            const delta = JSON.stringify(ev.arguments);
            yield makeEvent("tool_call_args", { tool_call_id: ev.id, delta });
          }
          this.open.calls.delete(ev.id);
          yield makeEvent("tool_call_end", { tool_call_id: ev.id });
          calls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
          break;
        }
        case "finish":
          break;
      }
    }
    // A source that just stops on abort must not pass for a complete answer.
    if (this.signal.aborted) throw new RunCancelled();
    yield* this.closeText();
    // Calls the stream started but never completed cannot be run; close their events.
    for (const id of this.open.calls) yield makeEvent("tool_call_end", { tool_call_id: id });
    this.open.calls.clear();

    const text = this.partial.text;
    this.partial = null;
    if (text || calls.length > 0) await this.persist([assistantMessage(message_id, text, calls)]);
    await this.checkpoint([]);
    yield* this.endStep();
    return { text, calls };
  }

  /** One tool step: runs the server tools it may, and returns the calls that must wait. */
  private async *toolStep(calls: ToolCall[]): AsyncGenerator<RunEvent, PendingToolCall[]> {
    yield* this.beginStep("tools");
    const pending: PendingToolCall[] = [];
    for (const call of calls) {
      if (this.signal.aborted) throw new RunCancelled();
      const server = this.prepared.server_tools.get(call.name);
      const waiting = { tool_call_id: call.id, tool_name: call.name, arguments: call.arguments };
      if (server && !server.requires_approval) {
        yield* this.runServerTool(call, server);
      } else if (server) {
        pending.push({ ...waiting, kind: "approval" });
      } else if (this.prepared.client_tools.has(call.name)) {
        pending.push({ ...waiting, kind: "client_tool" });
      } else {
        yield* this.writeResult(call.id, `the tool '${call.name}' is not available`, true);
      }
    }
    await this.checkpoint(pending);
    yield* this.endStep();
    return pending;
  }

  /** Calls a server tool, yielding its emits live, then its result and state change. */
  private async *runServerTool(call: ToolCall, tool: Tool): AsyncGenerator<RunEvent> {
    const { tenant_id, session_id, run_id } = this.input;
    const outcome = yield* withPushes<RunEvent, ToolOutcome>((push) => {
      const ctx: ToolCallContext = {
        tenant_id,
        session_id,
        run_id,
        tool_call_id: call.id,
        context: this.context === null ? null : structuredClone(this.context),
        emit: (name, value) => push(makeEvent("custom", { name: String(name), value })),
        signal: this.signal,
      };
      return callTool(tool, call.arguments, ctx, this.log);
    }, this.signal);

    let { result, is_error } = outcome;
    let stateEvents: RunEvent[] = [];
    if (outcome.state) {
      try {
        const change = applyStateUpdate(this.context, outcome.state);
        this.context = change.context;
        this.dirty = true;
        stateEvents = change.events;
      } catch (error) {
        result = `the tool ran but its state update could not be applied: ${errorText(error)}`;
        is_error = true;
      }
    }
    yield* this.writeResult(call.id, result, is_error);
    yield* stateEvents;
  }

  /** Persists a tool message answering `toolCallId` and yields its `tool_call_result`. */
  private async *writeResult(
    toolCallId: string,
    result: unknown,
    isError: boolean,
    wrap = true,
  ): AsyncGenerator<RunEvent> {
    const value = wrap ? toolResultValue(result, isError) : result;
    const [saved] = await this.persist([toolMessage(toolCallId, value)]);
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
    let runError: RunError | null = null;
    if (cancelled) {
      // nothing to report: cancellation is the client's own doing
    } else if (error instanceof ModelError) {
      runError = {
        code: error.code,
        message: error.message,
        provider: error.provider,
        model: error.model,
        attempts: error.attempts,
      };
    } else {
      this.log.error("run failed with an internal error", { error: errorDetail(error) });
      runError = { code: "internal_error", message: "the run failed with an internal error" };
    }

    // An internal error may be the store itself; only model failures and cancellations persist.
    if (cancelled || error instanceof ModelError) {
      try {
        const partial = this.partial;
        this.partial = null;
        if (partial?.text) {
          await this.persist([assistantMessage(partial.message_id, partial.text, [])]);
        }
        if (this.dirty) await this.checkpoint([]);
      } catch (persistError) {
        this.log.error("could not save the state of a failed run", {
          error: errorDetail(persistError),
        });
      }
    }
    return {
      status: cancelled ? "cancelled" : "failed",
      interrupt_payload: null,
      result: null,
      error: runError,
    };
  }

  /** Closes the events a failure left open, innermost first. */
  private async *closeOpen(): AsyncGenerator<RunEvent> {
    yield* this.closeText();
    for (const id of this.open.calls) yield makeEvent("tool_call_end", { tool_call_id: id });
    this.open.calls.clear();
    if (this.open.step) yield* this.endStep();
  }

  private async *closeText(): AsyncGenerator<RunEvent> {
    if (this.open.text === null) return;
    const message_id = this.open.text;
    this.open.text = null;
    yield makeEvent("text_message_end", { message_id });
  }

  private async *beginStep(step_name: "model" | "tools"): AsyncGenerator<RunEvent> {
    this.step++;
    this.open.step = { step: this.step, step_name };
    yield makeEvent("step_started", this.open.step);
  }

  private async *endStep(): AsyncGenerator<RunEvent> {
    const open = this.open.step;
    this.open.step = null;
    if (open) yield makeEvent("step_finished", open);
  }

  /** Appends messages to the session (tagged with this run) and to the in-memory conversation. */
  private async persist(messages: MessageInput[]): Promise<Message[]> {
    const { tenant_id, session_id, run_id } = this.input;
    const saved = await this.deps.store.appendMessages(tenant_id, session_id, messages, run_id);
    this.conversation.push(...saved);
    this.dirty = true;
    return saved;
  }

  /** Writes a checkpoint chained to the previous one and makes it the run's latest. */
  private async checkpoint(pending: PendingToolCall[]): Promise<void> {
    const { tenant_id, session_id, run_id } = this.input;
    const cp = await this.deps.store.addCheckpoint(tenant_id, {
      session_id,
      run_id,
      parent_id: this.parent,
      state: {
        messages: [...this.conversation],
        context: this.context,
        pending_tool_calls: pending.map((p) => ({ ...p })),
        step: this.step,
      },
    });
    this.parent = cp.checkpoint_id;
    this.dirty = false;
  }
}

/** Calls a tool; a tool that breaks its never-rejects contract still yields an error outcome. */
async function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  log: Logger,
): Promise<ToolOutcome> {
  try {
    return await tool.call(args, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    log.error("tool broke its contract and threw", {
      tool: tool.name,
      tool_call_id: ctx.tool_call_id,
      error: errorDetail(error),
    });
    return { result: `the tool '${tool.name}' failed unexpectedly`, is_error: true };
  }
}

/** What a client-written tool message says: its one data part's value, or its text. */
function partValue(message: Message): unknown {
  const [first] = message.content;
  return message.content.length === 1 && first.type === "data" ? first.value : messageText(message);
}

/** An error for a log line: its stack when it has one (the logger scrubs secrets from it). */
function errorDetail(error: unknown): string {
  return error instanceof Error ? error.stack ?? String(error) : String(error);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
