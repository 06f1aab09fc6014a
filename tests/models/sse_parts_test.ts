/**
 * Our readers of OpenAI-wire bodies (models/sse_parts.ts with openai_chat_stream.ts for `openai`
 * and openai_compatible_stream.ts for `openai-compatible`) against the AI SDK's own (each
 * provider's chat model `doStream`, built by the registry as a run builds it): for the same bytes,
 * the same parts in the same order, errors included. The bytes are the recorded real provider
 * streams of replay/fixtures/openai/ (whole, and cut into pieces that split events and UTF-8
 * characters), and hostile or unusual bodies no provider sent: broken JSON, a poisoned prototype,
 * shapes the schemas refuse, an event left unfinished, reasoning and content parts. Also: the
 * client really reads both providers' streams with them.
 */
import assert from "node:assert/strict";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { PartReader } from "../../src/models/sse_parts.ts";
import { attempt } from "../../src/models/attempt.ts";
import { providerEntry } from "../../src/models/registry.ts";
import { secretScrubber } from "../../src/secrets.ts";
import { cuts, recording } from "./replay/server.ts";
import * as openai from "./fake_openai.ts";
import { ask, resolved } from "./helpers.ts";

type Part = LanguageModelV4StreamPart;
const encoder = new TextEncoder();

/** What a body does after its bytes: ends, or fails as a reset connection does. */
let bodyEnd: "close" | "fail" = "close";

/** A body that hands `bytes` on in pieces of `piece` bytes (whole when omitted). */
function bodyOf(bytes: Uint8Array, piece = bytes.length): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) {
        if (bodyEnd === "fail") return controller.error(new TypeError("connection reset"));
        return controller.close();
      }
      controller.enqueue(bytes.slice(at, at + Math.max(1, piece)));
      at += piece;
    },
  });
}

/** Every part a reader gives, then what ended it: `done` or the error it threw. */
async function drain(reader: PartReader): Promise<{ parts: Part[]; end: unknown }> {
  const parts: Part[] = [];
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return { parts, end: "done" };
      parts.push(next.value);
    }
  } catch (error) {
    return { parts, end: error };
  }
}

/** The providers whose bodies we read ourselves. */
const WIRES = ["openai", "openai-compatible"] as const;
type Wire = typeof WIRES[number];

/** The registry's entry of a wire's provider. */
function entryOf(wire: Wire) {
  const entry = providerEntry(wire);
  assert.ok(entry?.parts, `${wire} has its own body reader`);
  return entry as typeof entry & { parts: NonNullable<typeof entry.parts> };
}

/** The AI SDK's parts for a body, from the provider's model as the registry builds it. */
async function sdkParts(wire: Wire, bytes: Uint8Array, piece?: number) {
  const model = await entryOf(wire).create({
    modelId: "m",
    apiKey: "sk-test",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: () =>
      Promise.resolve(
        new Response(bodyOf(bytes, piece), { headers: { "content-type": "text/event-stream" } }),
      ),
  });
  try {
    const { stream } = await model.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    return await drain(stream.getReader());
  } catch (error) {
    // An error event before any output: the openai SDK throws it from doStream.
    return { parts: [], end: error };
  }
}

/** Our parts for a body, given the SDK's parts for an empty one (as attempt.ts does). */
async function ourParts(wire: Wire, bytes: Uint8Array, piece?: number) {
  const empty = await sdkParts(wire, new Uint8Array());
  const parts = await entryOf(wire).parts();
  return drain(parts(bodyOf(bytes, piece).getReader(), empty.parts, {
    url: "http://127.0.0.1:9/v1/chat/completions",
    statusCode: 200,
    responseHeaders: {},
  }));
}

/** The block ids the transforms use as they are. */
const FIXED_IDS = new Set(["0", "txt-0", "reasoning-0"]);

/** Ids the parsers make up (sources, calls without one) differ from run to run. */
function normalise(parts: Part[], text: string): unknown[] {
  return parts.map((part) => {
    const out: Record<string, unknown> = { ...part };
    for (const key of ["id", "toolCallId"]) {
      const id = out[key];
      if (typeof id === "string" && !FIXED_IDS.has(id) && !text.includes(id)) {
        out[key] = "<generated>";
      }
    }
    return out;
  });
}

/** What ended a stream, comparable: the error's class and message. */
function endOf(end: unknown): unknown {
  if (end === "done") return end;
  if (end instanceof Error) return { name: end.name, message: end.message };
  return JSON.parse(JSON.stringify(end));
}

/**
 * Both readers agree on `bytes`. An error event before any output is thrown by the SDK's
 * `doStream` and streamed as an `error` part by ours (attempt.ts classifies both alike, see
 * "early error" below); then the parts before it must agree.
 */
async function assertSame(wire: Wire, bytes: Uint8Array, piece?: number, what = "") {
  const text = new TextDecoder().decode(bytes);
  const sdk = await sdkParts(wire, bytes, piece);
  const ours = await ourParts(wire, bytes, piece);
  const label = `${wire}: ${what}${piece ? ` in ${piece}-byte pieces` : ""}`;
  if (sdk.parts.length === 0 && sdk.end !== "done") {
    const error = ours.parts.find((p) => p.type === "error");
    assert.ok(error, `${label}: ours streams the early error`);
    return;
  }
  assert.deepEqual(normalise(ours.parts, text), normalise(sdk.parts, text), label);
  assert.deepEqual(endOf(ours.end), endOf(sdk.end), `${label}: end`);
  return ours.parts;
}

const FIXTURES = [...Deno.readDirSync(new URL("./replay/fixtures/openai/", import.meta.url))]
  .map((e) => `openai/${e.name}`).sort();

for (const wire of WIRES) {
  Deno.test(`${wire} stream: every recorded stream gives the SDK's parts, whole and in pieces`, async () => {
    assert.ok(FIXTURES.length >= 10, `${FIXTURES.length} fixtures`);
    const kinds = new Set<string>();
    for (const name of FIXTURES) {
      const rec = recording(name);
      const parts = await assertSame(wire, rec.body, undefined, name);
      for (const p of parts ?? []) kinds.add(p.type);
      assert.ok(cuts(rec, 7).events > 0, `${name}: pieces cut events`);
      for (const piece of [1, 7]) await assertSame(wire, rec.body, piece, name);
    }
    // The recordings exercise text, tool calls and a finish (sources: "annotations" below), and
    // DeepSeek's reasoning_content the openai-compatible reader's reasoning.
    const expected = ["text-delta", "tool-input-delta", "tool-call", "response-metadata", "finish"];
    if (wire === "openai-compatible") expected.push("reasoning-delta");
    for (const kind of expected) assert.ok(kinds.has(kind), `a recording gives ${kind}`);
  });
}

/** A body of `data:` events, framed as the wire frames them. */
function events(...data: string[]): Uint8Array {
  return encoder.encode(data.map((d) => `data: ${d}\n\n`).join(""));
}

const chunk = (extra: Record<string, unknown> = {}, delta: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: "c1",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { content: "hi", ...delta }, finish_reason: null }],
    ...extra,
  });

Deno.test("sse parts: hostile and unusual bodies give each SDK's parts and errors", async () => {
  const stop = JSON.stringify({
    id: "c1",
    choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
    usage: {
      prompt_tokens: 3,
      completion_tokens: 2,
      extra: 1,
      prompt_tokens_details: { cached_tokens: 1, audio_tokens: 0 },
    },
  });
  const cases: Record<string, Uint8Array> = {
    "broken JSON": events(chunk(), "{not json", stop),
    "poisoned prototype": events(chunk(), '{"__proto__":{"x":1},"choices":[]}', stop),
    "a constructor key with a prototype": events(
      chunk(),
      '{"choices":[],"constructor":{"prototype":{"x":1}}}',
      stop,
    ),
    "choices not a list": events(chunk(), '{"choices":{}}', stop),
    "a number where text goes": events(chunk(), chunk({}, { content: 5 }), stop),
    "a role the schema refuses": events(chunk({}, { role: "system" }), stop),
    "a chunk with both choices and an error": events(
      chunk({ error: { message: "both" } }),
      stop,
    ),
    "an error event after output": events(
      chunk(),
      '{"error":{"message":"boom","type":"server_error","code":"500"}}',
    ),
    "an error event naming nothing": events(chunk(), '{"error":{"message":"odd"}}'),
    "an early error event": events('{"error":{"message":"quota","code":"insufficient_quota"}}'),
    "logprobs and a refusal": events(
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { refusal: "no" },
          logprobs: { content: null, refusal: [{ token: "no", logprob: -1, top_logprobs: [] }] },
          finish_reason: "stop",
        }],
      }),
    ),
    "annotations": events(
      chunk({}, {
        annotations: [{
          type: "url_citation",
          url_citation: { start_index: 0, end_index: 2, url: "https://a.example", title: "A" },
        }],
      }),
      stop,
    ),
    "an event left unfinished at the end": encoder.encode(
      `data: ${chunk()}\n\ndata: ${stop}\n`,
    ),
    "no [DONE], no finish reason": events(chunk()),
    "an empty body": new Uint8Array(),
    "CRLF framing, a BOM, comments, event names and ids": encoder.encode(
      `\uFEFF: keep-alive\r\nevent: chunk\r\nid: 1\r\ndata: ${chunk()}\r\n\r\nretry: 10\r\ndata: ${stop}\r\n\r\ndata: [DONE]\r\n\r\n`,
    ),
    "a data field on two lines": encoder.encode(
      `data: {"choices":[{"index":0,\ndata: "delta":{"content":"two lines"}}]}\n\ndata: ${stop}\n\n`,
    ),
    "usage with text in a number field": events(
      chunk(),
      JSON.stringify({ choices: [], usage: { prompt_tokens: "3" } }),
      stop,
    ),
    "reasoning_content, then text": events(
      chunk({}, { content: null, reasoning_content: "think" }),
      chunk({}, { content: "answer" }),
      stop,
    ),
    "content parts with thinking": events(
      chunk({}, {
        content: [{ type: "thinking", thinking: [{ type: "text", text: "hm" }] }, {
          type: "text",
          text: "ok",
        }],
      }),
      stop,
    ),
    "a role of empty text and a refusal that is a number": events(
      chunk({}, { role: "", refusal: 5 }),
      stop,
    ),
    "a usage number too large for a double": events(
      chunk(),
      '{"choices":[],"usage":{"prompt_tokens":1e999}}',
      stop,
    ),
    "a tool call whose name comes after its arguments, with a thought signature": events(
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "t1", function: { arguments: '{"a":' } }] },
        }],
      }),
      JSON.stringify({
        choices: [{
          index: 0,
          delta: {
            tool_calls: [{
              index: 0,
              function: { name: "f", arguments: "1}" },
              extra_content: { google: { thought_signature: "sig" } },
            }],
          },
          finish_reason: "tool_calls",
        }],
      }),
    ),
    // A tool call ends an open reasoning block, not an open text block.
    "reasoning, text, reasoning, then a tool call": events(
      chunk({}, { content: null, reasoning_content: "think" }),
      chunk({}, { content: "answer" }),
      chunk({}, { content: null, reasoning_content: "more" }),
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "t1", function: { name: "f", arguments: "{}" } }] },
        }],
      }),
      stop,
    ),
    "text, then a tool call": events(
      chunk({}, { content: "answer" }),
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "t1", function: { name: "f", arguments: "{}" } }] },
        }],
      }),
      stop,
    ),
    "a tool call without a name": events(
      JSON.stringify({
        choices: [{
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "t1", function: { arguments: "{}" } }] },
        }],
      }),
      stop,
    ),
  };
  for (const wire of WIRES) {
    for (const [what, bytes] of Object.entries(cases)) {
      await assertSame(wire, bytes, undefined, what);
      await assertSame(wire, bytes, 3, what);
    }
  }
});

Deno.test("sse parts: a body that fails after output fails ours and the SDK's alike", async () => {
  bodyEnd = "fail";
  try {
    for (const wire of WIRES) {
      await assertSame(wire, events(chunk(), chunk()), undefined, "reset after two chunks");
    }
  } finally {
    bodyEnd = "close";
  }
});

for (const wire of WIRES) {
  Deno.test(`${wire} stream: the client reads it with our reader, not the SDK's chain`, async () => {
    const entry = entryOf(wire);
    await using server = openai.startFakeOpenAI();
    server.enqueue(openai.text(["a", "b"]));
    const established = await attempt({
      entry,
      resolved: resolved(wire, server.url),
      request: ask("x"),
      signal: new AbortController().signal,
      env: {},
      fetch,
      startedAt: performance.now(),
      scrub: secretScrubber([]),
    });
    assert.ok("reader" in established, "established");
    assert.ok(
      !(established.reader instanceof ReadableStreamDefaultReader),
      "the parts come from our reader",
    );
    const { parts } = await drain(established.reader);
    const all = [...established.buffered, ...parts];
    assert.equal(all.flatMap((p) => p.type === "text-delta" ? [p.delta] : []).join(""), "ab");
    assert.equal(all.at(-1)?.type, "finish");
    established.release();
  });
}
