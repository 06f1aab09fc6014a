/**
 * The events of an established model stream (models/model_events.ts): the AI SDK's parts mapped
 * onto ours (text, tool calls in pieces or whole, the finish and its usage), refused parts
 * (arguments that are no JSON object, an interrupted finish, no finish) failing as mid-stream
 * `ModelError`s; and over HTTP, a broken or abandoned stream and an abort mid-stream.
 */
import assert from "node:assert/strict";
import type { Established, OpenContext, Part } from "../../src/models/attempt.ts";
import { modelEvents } from "../../src/models/model_events.ts";
import { createModelClient, type ModelEvent } from "../../src/models/mod.ts";
import { providerEntry } from "../../src/models/registry.ts";
import * as openai from "./fake_openai.ts";
import { ask, assertModelError, resolved, textOf, timed } from "./helpers.ts";

const client = createModelClient({ env: {} });
const never = new AbortController().signal;

Deno.test("stream: a connection broken midway fails from the iterator and is not retried", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.broken(["a ", "b ", "c ", "d"], 2));
  const stream = await client.open(resolved("openai", server.url), ask("x"), never);
  assert.equal(stream.attempts, 1);
  const seen: ModelEvent[] = [];
  const { error } = await timed(async () => {
    for await (const e of stream.events) seen.push(e);
  });
  assertModelError(error, "model_stream", 1);
  assert.equal(textOf(seen), "a b ");
  assert.equal(server.requests.length, 1);
});

Deno.test("stream: a consumer that stops early releases the connection", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.text(["a ", "b ", "c ", "d"], { delay: 50 }));
  const stream = await client.open(resolved("openai", server.url), ask("x"), never);
  for await (const e of stream.events) {
    if (e.type === "text-delta") break;
  }
});

Deno.test("abort: mid-stream ends the iterator with the signal's reason", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.text(["a ", "b ", "c ", "d ", "e"], { delay: 200 }));
  const ac = new AbortController();
  const stream = await client.open(resolved("openai", server.url), ask("x"), ac.signal);
  const { ms, error } = await timed(async () => {
    for await (const e of stream.events) {
      if (e.type === "text-delta") ac.abort(new Error("stop now"));
    }
  });
  assert.ok(error instanceof Error && error.message === "stop now", String(error));
  assert.ok(ms < 600, `elapsed ${ms}`);
});

Deno.test("abort: mid-stream ends the iterator at once even when the body ignores it", async () => {
  // A response whose body sends one token, then neither ends nor reacts to cancel or abort.
  const frame = (delta: Record<string, unknown>) =>
    `data: ${
      JSON.stringify({
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta, finish_reason: null }],
      })
    }\n\n`;
  const deaf: typeof fetch = () =>
    Promise.resolve(
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(
              new TextEncoder().encode(frame({ role: "assistant", content: "a " })),
            );
          },
          cancel: () => new Promise(() => {}),
        }),
        { headers: { "content-type": "text/event-stream" } },
      ),
    );
  const ac = new AbortController();
  const deafClient = createModelClient({ env: {}, fetch: deaf });
  const stream = await deafClient.open(
    resolved("openai", "http://127.0.0.1:9/v1"),
    ask("x"),
    ac.signal,
  );
  const { ms, error } = await timed(async () => {
    for await (const e of stream.events) {
      if (e.type === "text-delta") setTimeout(() => ac.abort(new Error("stop now")), 50);
    }
  });
  assert.ok(error instanceof Error && error.message === "stop now", String(error));
  assert.ok(ms < 1000, `elapsed ${ms}`);
});

/** An established attempt whose stream holds `parts`, for `modelEvents` without a provider. */
function establishedOf(parts: Part[]): Established {
  const stream = new ReadableStream<Part>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  return {
    reader: stream.getReader(),
    buffered: [],
    controller: new AbortController(),
    release: () => {},
    observed: { firstByte: true, onFirstByte: () => {} },
    callOptions: {},
  };
}

const ctx: OpenContext = {
  entry: providerEntry("openai")!,
  resolved: resolved("openai", "http://127.0.0.1:9/v1"),
  request: ask("x"),
  signal: never,
  env: {},
  fetch,
  startedAt: performance.now(),
  scrub: (text) => text,
};

/** The events `modelEvents` makes of `parts`, or its error. */
async function eventsOf(parts: Part[]): Promise<{ events: ModelEvent[]; error?: unknown }> {
  const events: ModelEvent[] = [];
  try {
    for await (const e of modelEvents(ctx, establishedOf(parts), 1)) events.push(e);
  } catch (error) {
    return { events, error };
  }
  return { events };
}

const usage = (input?: number, output?: number) => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: undefined, reasoning: undefined },
});
const finish = (unified: "stop" | "interrupted" = "stop"): Part => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: usage(3, 4),
});

Deno.test("model events: text, a streamed call, a whole call, then the finish", async () => {
  const { events, error } = await eventsOf([
    { type: "text-delta", id: "t", delta: "Hi" },
    { type: "text-delta", id: "t", delta: "" },
    { type: "tool-input-start", id: "c1", toolName: "add" },
    { type: "tool-input-delta", id: "c1", delta: '{"a":1}' },
    { type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":1}' },
    { type: "tool-call", toolCallId: "c2", toolName: "now", input: "" },
    { type: "tool-call", toolCallId: "p1", toolName: "web", input: "{}", providerExecuted: true },
    finish(),
  ]);
  assert.equal(error, undefined);
  assert.deepEqual(events, [
    { type: "text-delta", delta: "Hi" },
    { type: "tool-call-start", id: "c1", name: "add" },
    { type: "tool-call-delta", id: "c1", delta: '{"a":1}' },
    { type: "tool-call", id: "c1", name: "add", arguments: { a: 1 } },
    // A call delivered whole still gets its start and delta; empty arguments mean {}.
    { type: "tool-call-start", id: "c2", name: "now" },
    { type: "tool-call-delta", id: "c2", delta: "{}" },
    { type: "tool-call", id: "c2", name: "now", arguments: {} },
    // A call the provider runs is its own event: never one agentd runs.
    { type: "provider-tool-call", id: "p1", name: "web", arguments: {} },
    {
      type: "finish",
      reason: "stop",
      raw_reason: "stop",
      usage: { input_tokens: 3, output_tokens: 4 },
    },
  ]);
});

Deno.test("model events: what cannot be used fails mid-stream as model_stream", async () => {
  const call = (input: string): Part => ({
    type: "tool-call",
    toolCallId: "c1",
    toolName: "add",
    input,
  });
  for (
    const [parts, message] of [
      [[call("{oops")], /arguments that are not JSON/],
      [[call("[1]")], /arguments that are not a JSON object/],
      [[finish("interrupted")], /ended before the response was complete/],
      [[{ type: "text-delta", id: "t", delta: "a" }], /ended without a finish/],
      [[{ type: "error", error: { message: "overloaded" } }], /stream failed: overloaded/],
    ] as [Part[], RegExp][]
  ) {
    const { error } = await eventsOf(parts);
    const failure = assertModelError(error, "model_stream", 1);
    assert.match(failure.message, message);
    assert.match(failure.message, /^openai\/openai-fake-model: /);
  }
});
