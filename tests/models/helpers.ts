/**
 * Small builders shared by the model tests: messages, resolved models, event collection, and the
 * assertion of a `ModelError`.
 */
import type { Message, Part, ToolCall } from "../../src/api/schemas.ts";
import assert from "node:assert/strict";
import {
  ModelError,
  type ModelEvent,
  type ModelRequest,
  type ModelStream,
  type ResolvedModel,
} from "../../src/models/mod.ts";

let seq = 0;

/** A stored message of the given role and text (or parts). */
export function msg(
  role: Message["role"],
  content: string | Part[],
  extra: { tool_calls?: ToolCall[]; tool_call_id?: string } = {},
): Message {
  return {
    message_id: `m${++seq}`,
    session_id: "s1",
    run_id: null,
    role,
    content: typeof content === "string" ? [{ type: "text", value: content }] : content,
    created_at: new Date(0).toISOString(),
    ...extra,
  };
}

/** A request with one user message. */
export function ask(text: string, more: Partial<ModelRequest> = {}): ModelRequest {
  return { system: "You are a test.", messages: [msg("user", text)], tools: [], ...more };
}

/** A resolved model pointing at a fake server, with fast retries by default. */
export function resolved(
  provider: string,
  url: string,
  more: Partial<ResolvedModel> = {},
): ResolvedModel {
  return {
    provider,
    model: `${provider}-fake-model`,
    base_url: url,
    api_key: "test-key",
    inference_params: {},
    retry: { max_attempts: 3, initial_backoff: 10, max_backoff: 40 },
    ...more,
  };
}

/** All events of a stream. */
export async function collect(stream: ModelStream): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const e of stream.events) out.push(e);
  return out;
}

/** The concatenated text of text deltas. */
export function textOf(events: ModelEvent[]): string {
  return events.flatMap((e) => e.type === "text-delta" ? [e.delta] : []).join("");
}

/** A port nothing listens on (bound, then released). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Milliseconds `fn` took, with its result or error. */
export async function timed<T>(
  fn: () => Promise<T>,
): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await fn();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

/** Asserts a ModelError with this code and attempt count and returns it. */
export function assertModelError(error: unknown, code: string, attempts: number): ModelError {
  assert.ok(error instanceof ModelError, `expected a ModelError, got ${error}`);
  assert.equal(error.code, code, error.message);
  assert.equal(error.attempts, attempts, error.message);
  return error;
}
