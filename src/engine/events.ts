/**
 * The one internal event model. The engine produces these; the native SSE encoder writes them
 * almost as they are (they already carry the native `kind` names and snake_case fields), the
 * AG-UI and A2A encoders map them. `timestamp` is added when an event is created.
 */
import type { Message, RunError, RunStatus } from "../api/schemas.ts";

/** An RFC 6902 JSON Patch operation. */
export type PatchOperation =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/** Event payloads by kind (without `kind` and `timestamp`). */
export interface RunEventPayloads {
  run_started: { session_id: string; run_id: string };
  messages_snapshot: { messages: Message[] };
  step_started: { step: number; step_name: "model" | "tools" };
  step_finished: { step: number; step_name: "model" | "tools" };
  text_message_start: { message_id: string; role: "assistant" };
  text_message_content: { message_id: string; delta: string };
  text_message_end: { message_id: string };
  tool_call_start: { tool_call_id: string; tool_name: string; parent_message_id: string };
  tool_call_args: { tool_call_id: string; delta: string };
  tool_call_end: { tool_call_id: string };
  /** A server tool's result; `content` is what the model sees. */
  tool_call_result: {
    tool_call_id: string;
    message_id: string;
    content: unknown;
    is_error: boolean;
  };
  /** The whole agent state (the `context`). */
  state_snapshot: { context: Record<string, unknown> | null };
  /** An incremental change of the `context`, as patch operations rooted at the context. */
  state_delta: { delta: PatchOperation[] };
  /** A live update a tool emitted (`emit(name, value)`); never persisted. */
  custom: { name: string; value: unknown };
  run_finished: {
    session_id: string;
    run_id: string;
    status: RunStatus;
    interrupt_payload: Record<string, unknown> | null;
    result: unknown;
    error?: RunError | null;
  };
}

/** Every event kind. */
export type RunEventKind = keyof RunEventPayloads;

/** One internal run event. */
export type RunEvent = {
  [K in RunEventKind]: { kind: K; timestamp: number } & RunEventPayloads[K];
}[RunEventKind];

/** An event of one kind. */
export type RunEventOf<K extends RunEventKind> = Extract<RunEvent, { kind: K }>;

/** Creates an event stamped with the current time in fractional epoch seconds. */
export function makeEvent<K extends RunEventKind>(
  kind: K,
  payload: RunEventPayloads[K],
): RunEventOf<K> {
  return { kind, timestamp: Date.now() / 1000, ...payload } as unknown as RunEventOf<K>;
}
