/**
 * The ReAct graph: a model step, then a tool step for the calls it made, until the model answers
 * without calls, a call must wait (interrupt), `max_steps` is reached, the model fails or the run
 * is cancelled. Every step ends with a checkpoint written with the step's messages in one
 * transaction; the last event is always `run_finished`.
 */
import type { Message, MessageInput, RunError, ToolCall } from "../api/schemas.ts";
import { systemClock } from "../clock.ts";
import { ModelError } from "../models/mod.ts";
import type { Logger } from "../log.ts";
import { newMessages, StoreUnavailable } from "../store/mod.ts";
import type { StepCommit } from "../store/mod.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "../tools/mod.ts";
import { abortable, abortableIter, RunCancelled, withPushes } from "./async.ts";
import { assistantMessage, messageText, toolMessage, toolResultValue } from "./conversation.ts";
import { makeEvent, type RunEvent, type RunEventPayloads } from "../api/events.ts";
import { loadStart } from "./start.ts";
import { applyStateUpdate, type Context, type StateChange } from "./state.ts";
import type {
  EngineDeps,
  InterruptPayload,
  PendingToolCall,
  PreparedRun,
  RunInput,
  RunOptions,
  RunResult,
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
  prepared: PreparedRun,
  input: RunInput,
  signal: AbortSignal,
  options: RunOptions = {},
): AsyncGenerator<RunEvent> {
  // Normally loaded by the run service before it creates the run; loading here still throws its
  // 404/422 before the first event.
  const start = input.start ?? await loadStart(deps, prepared, input);
  yield* new Execution(deps, prepared, input, start, signal, options).run();
}

type Finish = Pick<RunEventPayloads["run_finished"], "status" | "interrupt_payload" | "result">;

/** The mutable state of one run while it executes. */
class Execution {
  private conversation: Message[] = [];
  private context: Context = null;
  private parent: string | null;
  private step: number;
  private modelSteps = 0;
  /** Messages or context changed since the last checkpoint. */
  private dirty = false;
  /** Messages of the current step not committed yet. */
  private unsaved: Message[] = [];
  /** The last step's writes, committed with the outcome (see `RunOptions.finish`). */
  private last: StepCommit | null = null;
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
    private readonly options: RunOptions,
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
    const last = this.last;
    this.last = null;
    if (this.options.finish) {
      this.options.finish(last);
    } else if (last) {
      try {
        await this.deps.store.commitStep(last);
      } catch (error) {
        this.log.error("could not save the last step of the run", { error: errorDetail(error) });
        finish = internalFailure();
      }
    }
    yield makeEvent("run_finished", { session_id, run_id, ...finish });
  }

  /** The graph proper; returns how the run finished normally. */
  private async *graph(): AsyncGenerator<RunEvent, Finish> {
    const { request } = this.input;

    // The conversation is the messages table (as read at the start), not the checkpoint: edits
    // made through the messages API between runs are what this run sees. The input is already
    // stored with the run record unless calls are answered first.
    this.conversation = [...this.start.conversation, ...this.start.input];
    this.context = request.context ?? this.start.context;
    if (request.context || this.start.input.length > 0) this.dirty = true;

    const answers = this.start.answers;
    if (answers.length > 0) {
      yield* this.answerStep(answers);
      const used = new Set(
        answers.flatMap(({ answer }) => answer.kind === "input_message" ? [answer.index] : []),
      );
      const rest = request.messages.filter((_, i) => !used.has(i));
      if (rest.length > 0) {
        this.persist(rest);
        await this.commit(null);
      }
    }
    yield makeEvent("messages_snapshot", { messages: [...this.conversation] });
    if (this.context !== null) yield makeEvent("state_snapshot", { context: this.context });

    while (true) {
      if (this.signal.aborted) throw new RunCancelled();
      if (this.modelSteps >= this.prepared.max_steps) {
        if (this.dirty) await this.checkpoint([], true);
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
          const [saved] = this.persist([message]);
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
    await this.checkpoint([], false);
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
    if (text || calls.length > 0) this.persist([assistantMessage(message_id, text, calls)]);
    // A step without calls is the run's last.
    await this.checkpoint([], calls.length === 0);
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
    // A step that leaves calls pending is the run's last.
    await this.checkpoint(pending, pending.length > 0);
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
    let change: StateChange | undefined;
    if (outcome.state) {
      try {
        change = applyStateUpdate(this.context, outcome.state);
        this.context = change.context;
        this.dirty = true;
      } catch (error) {
        result = `the tool ran but its state update could not be applied: ${errorText(error)}`;
        is_error = true;
      }
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
    const [saved] = this.persist([toolMessage(toolCallId, value)]);
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
    } else if (error instanceof StoreUnavailable) {
      // An outage, not a bug: the run cannot save its steps, so it stops where it last saved.
      this.log.warn("run failed: the store is unavailable", { error: error.message });
      runError = {
        code: "store_unavailable",
        message: "the store could not be reached during the run; its last saved step is kept",
      };
    } else {
      this.log.error("run failed with an internal error", { error: errorDetail(error) });
      runError = { code: "internal_error", message: "the run failed with an internal error" };
    }

    // An internal error may be the store itself; only model failures and cancellations end with
    // a checkpoint. Messages the failed step completed are kept either way.
    if (cancelled || error instanceof ModelError) {
      try {
        const partial = this.partial;
        this.partial = null;
        if (partial?.text) this.persist([assistantMessage(partial.message_id, partial.text, [])]);
        if (this.dirty) await this.checkpoint([], true);
      } catch (persistError) {
        this.log.error("could not save the state of a failed run", {
          error: errorDetail(persistError),
        });
      }
    } else if (this.unsaved.length > 0) {
      this.last = { ...this.ids(), messages: this.unsaved, checkpoint: null };
      this.unsaved = [];
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

  private ids(): Pick<StepCommit, "tenant_id" | "session_id" | "run_id"> {
    const { tenant_id, session_id, run_id } = this.input;
    return { tenant_id, session_id, run_id };
  }

  /**
   * Adds messages (tagged with this run) to the in-memory conversation; they are written with the
   * step's checkpoint, or by `commit`.
   */
  private persist(inputs: MessageInput[]): Message[] {
    const now = (this.deps.clock ?? systemClock).now();
    const saved = newMessages(this.input.session_id, inputs, this.input.run_id, now);
    this.conversation.push(...saved);
    this.unsaved.push(...saved);
    this.dirty = true;
    return saved;
  }

  /**
   * Ends a step: its messages and a checkpoint chained to the previous one, which becomes the
   * run's latest. The run's `last` step is kept for the outcome's transaction (see `run`).
   */
  private async checkpoint(pending: PendingToolCall[], last: boolean): Promise<void> {
    const checkpoint_id = crypto.randomUUID();
    await this.commit({
      checkpoint_id,
      parent_id: this.parent,
      state: {
        context: this.context,
        pending_tool_calls: pending.map((p) => ({ ...p })),
        step: this.step,
      },
    }, last);
    this.parent = checkpoint_id;
    this.dirty = false;
  }

  /** Writes the unsaved messages and `checkpoint` in one transaction (or keeps them as `last`). */
  private async commit(checkpoint: StepCommit["checkpoint"], last = false): Promise<void> {
    // A step after the one kept as last (there is none today) must not overtake it.
    if (this.last) {
      const earlier = this.last;
      this.last = null;
      await this.deps.store.commitStep(earlier);
    }
    const step: StepCommit = { ...this.ids(), messages: this.unsaved, checkpoint };
    this.unsaved = [];
    if (last) this.last = step;
    else await this.deps.store.commitStep(step);
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

/** How a run ends whose last writes failed (the store, most likely). */
function internalFailure(): Finish & { error: RunError } {
  return {
    status: "failed",
    interrupt_payload: null,
    result: null,
    error: { code: "internal_error", message: "the run failed with an internal error" },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
