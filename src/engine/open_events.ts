/**
 * The events a run has opened and not closed yet — its step, its assistant text message, its tool
 * calls — so every start gets its end: in order while the run goes on, innermost first when a
 * failure or a cancellation cuts it short, before `run_finished`.
 */
import { makeEvent, type RunEvent } from "../api/events.ts";

/** A step's `step_started` / `step_finished` payload. */
type StepPayload = { step: number; step_name: "model" | "tools" };

/** The open events of one run. */
export class OpenEvents {
  #step: StepPayload | null = null;
  /** The message id of the open text message. */
  #text: string | null = null;
  /** The id of the open reasoning block. */
  #reasoning: string | null = null;
  readonly #calls = new Set<string>();

  /** Starts step number `step`. */
  stepStarted(step: number, step_name: StepPayload["step_name"]): RunEvent {
    this.#step = { step, step_name };
    return makeEvent("step_started", this.#step);
  }

  /** Ends the open step, if there is one. */
  *stepFinished(): Generator<RunEvent> {
    const open = this.#step;
    this.#step = null;
    if (open) yield makeEvent("step_finished", open);
  }

  /** A text delta of the assistant message `message_id`, opening the message first if needed. */
  *text(message_id: string, delta: string): Generator<RunEvent> {
    if (this.#text === null) {
      this.#text = message_id;
      yield makeEvent("text_message_start", { message_id, role: "assistant" });
    }
    yield makeEvent("text_message_content", { message_id, delta });
  }

  /** Ends the open text message, if there is one. */
  *textEnd(): Generator<RunEvent> {
    if (this.#text === null) return;
    const message_id = this.#text;
    this.#text = null;
    yield makeEvent("text_message_end", { message_id });
  }

  /** Starts reasoning block `id` of the assistant message `parent_message_id`. */
  reasoningStart(id: string, parent_message_id: string): RunEvent[] {
    const out = [...this.reasoningEnd()];
    this.#reasoning = id;
    out.push(makeEvent("reasoning_message_start", { message_id: id, parent_message_id }));
    return out;
  }

  /** A chunk of the open reasoning block (none when no block is open). */
  reasoningContent(delta: string): RunEvent[] {
    if (this.#reasoning === null) return [];
    return [makeEvent("reasoning_message_content", { message_id: this.#reasoning, delta })];
  }

  /** Ends the open reasoning block, if there is one. */
  *reasoningEnd(encrypted_value?: string): Generator<RunEvent> {
    if (this.#reasoning === null) return;
    const message_id = this.#reasoning;
    this.#reasoning = null;
    yield makeEvent("reasoning_message_end", {
      message_id,
      ...(encrypted_value ? { encrypted_value } : {}),
    });
  }

  /** Starts the tool call `id` of the assistant message `parent_message_id`. */
  callStarted(
    id: string,
    name: string,
    parent_message_id: string,
    providerExecuted = false,
  ): RunEvent {
    this.#calls.add(id);
    return makeEvent("tool_call_start", {
      tool_call_id: id,
      tool_name: name,
      parent_message_id,
      ...(providerExecuted ? { provider_executed: true as const } : {}),
    });
  }

  /** Ends the tool call `id`. */
  callEnded(id: string): RunEvent {
    this.#calls.delete(id);
    return makeEvent("tool_call_end", { tool_call_id: id });
  }

  /** Ends every open tool call (calls a model started and never completed). */
  *callsEnd(): Generator<RunEvent> {
    for (const id of this.#calls) yield makeEvent("tool_call_end", { tool_call_id: id });
    this.#calls.clear();
  }

  /** The ids of the tool calls started and not ended, in start order. */
  openCalls(): string[] {
    return [...this.#calls];
  }

  /** Ends everything open, innermost first: the reasoning, the text, the calls, the step. */
  *all(): Generator<RunEvent> {
    yield* this.reasoningEnd();
    yield* this.textEnd();
    yield* this.callsEnd();
    yield* this.stepFinished();
  }
}
