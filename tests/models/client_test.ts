/**
 * The model client against local fake provider servers over real HTTP: streaming, tool calls,
 * parameters on the wire, retries, backoff, Retry-After and abort (the establishment timeout is in
 * attempt_test.ts, a stream's events in model_events_test.ts).
 */
import assert from "node:assert/strict";
import { createModelClient } from "../../src/models/mod.ts";
import type { ModelAttemptInfo, ModelEvent } from "../../src/models/mod.ts";
import * as openai from "./fake_openai.ts";
import * as anthropic from "./fake_anthropic.ts";
import { startFakeServer } from "./fake_server.ts";
import {
  ask,
  assertModelError,
  closedPort,
  collect,
  msg,
  resolved,
  textOf,
  timed,
} from "./helpers.ts";
import { eventually } from "../_kit/mod.ts";

const client = createModelClient({ env: {} });
const never = new AbortController().signal;

Deno.test("openai: streams text, finish and usage; request carries system and messages", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.text(["Hello", ", ", "world"]));
  const stream = await client.open(resolved("openai", server.url), ask("hi there"), never);
  assert.equal(stream.attempts, 1);
  assert.ok(stream.establish_ms >= 0);
  const events = await collect(stream);
  assert.equal(textOf(events), "Hello, world");
  assert.deepEqual(events.at(-1), {
    type: "finish",
    reason: "stop",
    raw_reason: "stop",
    usage: { input_tokens: 11, output_tokens: 7, reasoning_tokens: 0, cached_input_tokens: 0 },
  });
  assert.equal(server.requests.length, 1);
  const req = server.requests[0];
  assert.equal(req.path, "/v1/chat/completions");
  assert.equal(req.headers.get("authorization"), "Bearer test-key");
  assert.equal(req.body.model, "openai-fake-model");
  assert.equal(req.body.stream, true);
  assert.deepEqual(req.body.messages, [
    { role: "system", content: "You are a test." },
    { role: "user", content: "hi there" },
  ]);
});

Deno.test("openai: tool calls split across chunks are assembled", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.toolCalls([
    { id: "call_1", name: "weather", pieces: ['{"ci', 'ty": "Pa', 'ris"}'] },
    { id: "call_2", name: "add", pieces: ['{"a": 1,', ' "b": 2}'] },
  ]));
  const tools = [{
    name: "weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  }, {
    name: "add",
    description: "Adds",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  }];
  const stream = await client.open(resolved("openai", server.url), ask("go", { tools }), never);
  const events = await collect(stream);
  const calls = events.filter((e) => e.type === "tool-call");
  assert.deepEqual(calls, [
    { type: "tool-call", id: "call_1", name: "weather", arguments: { city: "Paris" } },
    { type: "tool-call", id: "call_2", name: "add", arguments: { a: 1, b: 2 } },
  ]);
  const starts = events.filter((e) => e.type === "tool-call-start");
  assert.deepEqual(starts.map((e) => e.type === "tool-call-start" && e.name), ["weather", "add"]);
  const args1 = events.flatMap((e) =>
    e.type === "tool-call-delta" && e.id === "call_1" ? [e.delta] : []
  );
  assert.equal(args1.join(""), '{"city": "Paris"}');
  assert.ok(args1.length >= 2, "arguments arrive in pieces");
  assert.equal(events.at(-1)?.type === "finish" && events.at(-1)!.type, "finish");
  assert.deepEqual((events.at(-1) as { reason: string }).reason, "tool-calls");
  const body = server.requests[0].body;
  assert.deepEqual((body.tools as unknown[])[0], {
    type: "function",
    function: {
      name: "weather",
      description: "Weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  });
});

Deno.test("openai: conversation with tool results and data parts reaches the wire", async () => {
  await using server = openai.startFakeOpenAI();
  const messages = [
    msg("user", [{ type: "text", value: "Weather? " }, { type: "data", value: { city: "Oslo" } }]),
    msg("assistant", "", {
      tool_calls: [{ id: "call_9", name: "weather", arguments: { city: "Oslo" } }],
    }),
    msg("tool", [{ type: "data", value: { temp: -3 } }], { tool_call_id: "call_9" }),
  ];
  const stream = await client.open(
    resolved("openai", server.url),
    { system: "", messages, tools: [] },
    never,
  );
  await collect(stream);
  assert.deepEqual(server.requests[0].body.messages, [
    {
      role: "user",
      content: [{ type: "text", text: "Weather? " }, { type: "text", text: '{"city":"Oslo"}' }],
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_9",
        type: "function",
        function: { name: "weather", arguments: '{"city":"Oslo"}' },
      }],
    },
    { role: "tool", tool_call_id: "call_9", content: '{"temp":-3}' },
  ]);
});

Deno.test("openai: inference params and provider_params reach the request body", async () => {
  await using server = openai.startFakeOpenAI();
  const model = resolved("openai", server.url, {
    inference_params: {
      max_tokens: 77,
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ["END"],
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      seed: 42,
      provider_params: { user: "user-7", parallelToolCalls: false },
    },
  });
  await collect(await client.open(model, ask("x"), never));
  const body = server.requests[0].body;
  assert.equal(body.max_tokens, 77);
  assert.equal(body.temperature, 0.3);
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.stop, ["END"]);
  assert.equal(body.frequency_penalty, 0.5);
  assert.equal(body.presence_penalty, -0.5);
  assert.equal(body.seed, 42);
  assert.equal(body.user, "user-7");
  assert.equal(body.parallel_tool_calls, false);
});

Deno.test("openai-compatible: provider_params pass into the body unchanged, top_k too", async () => {
  await using server = openai.startFakeOpenAI();
  const model = resolved("openai-compatible", server.url, {
    api_key: undefined,
    inference_params: {
      top_k: 5,
      temperature: 0,
      provider_params: { repetition_penalty: 1.1, chat_template_kwargs: { thinking: false } },
    },
  });
  const events = await collect(await client.open(model, ask("x"), never));
  assert.equal(textOf(events), "Hello world");
  const req = server.requests[0];
  assert.equal(req.headers.get("authorization"), null, "no key, no Authorization header");
  assert.equal(req.body.repetition_penalty, 1.1);
  assert.deepEqual(req.body.chat_template_kwargs, { thinking: false });
  assert.equal(req.body.temperature, 0);
  assert.ok((req.body.stream_options as { include_usage: boolean }).include_usage);
});

Deno.test("openai-compatible: no endpoint configured fails at once with model_error", async () => {
  const model = resolved("openai-compatible", "", { base_url: undefined });
  const { error } = await timed(() => client.open(model, ask("x"), never));
  const e = assertModelError(error, "model_error", 1);
  assert.match(e.message, /OPENAI_COMPATIBLE_BASE_URL/);
});

Deno.test("credentials and endpoint come from the client's env when the model has none", async () => {
  await using server = openai.startFakeOpenAI();
  const envClient = createModelClient({
    env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-from-env" },
  });
  const model = resolved("openai", "", { base_url: undefined, api_key: undefined });
  await collect(await envClient.open(model, ask("x"), never));
  assert.equal(server.requests[0].headers.get("authorization"), "Bearer sk-from-env");
});

Deno.test("retry: transient 500s are retried with exponential backoff, then succeed", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.httpError(500, "boom 1"), openai.httpError(502, "boom 2"));
  const model = resolved("openai", server.url, {
    retry: { max_attempts: 3, initial_backoff: 100, max_backoff: 1000 },
  });
  const { ms, value } = await timed(() => client.open(model, ask("x"), never));
  assert.ok(value);
  assert.equal(value.attempts, 3);
  assert.equal(server.requests.length, 3);
  // 100 + 200 ms of backoff, each plus at most 10% jitter; generous upper bound for slow CI.
  assert.ok(ms >= 300, `elapsed ${ms}`);
  assert.ok(ms < 2000, `elapsed ${ms}`);
  assert.equal(textOf(await collect(value)), "Hello world");
});

Deno.test("retry: max_backoff caps the exponential base", async () => {
  await using server = openai.startFakeOpenAI();
  for (let i = 0; i < 5; i++) server.enqueue(openai.httpError(503, "unavailable"));
  const model = resolved("openai", server.url, {
    retry: { max_attempts: 6, initial_backoff: 50, max_backoff: 60 },
  });
  const { ms, value } = await timed(() => client.open(model, ask("x"), never));
  assert.equal(value?.attempts, 6);
  // 50 + 4 × 60 = 290 ms plus jitter ≤ 6 ms each; uncapped it would be 1550 ms.
  assert.ok(ms >= 290, `elapsed ${ms}`);
  assert.ok(ms < 1200, `elapsed ${ms}`);
  await collect(value!);
});

Deno.test("retry: attempts exhausted reject with model_http_<status> and the provider's message", async () => {
  await using server = openai.startFakeOpenAI();
  for (let i = 0; i < 3; i++) server.enqueue(openai.httpError(500, "The server had an error"));
  const { error } = await timed(() => client.open(resolved("openai", server.url), ask("x"), never));
  const e = assertModelError(error, "model_http_500", 3);
  assert.match(e.message, /The server had an error/);
  assert.equal(e.provider, "openai");
  assert.equal(e.model, "openai-fake-model");
  assert.equal(server.requests.length, 3);
});

Deno.test("retry: 408, 409 and 429 are transient; 400 and 404 are not", async () => {
  for (const status of [408, 409, 429]) {
    await using server = openai.startFakeOpenAI();
    server.enqueue(openai.httpError(status, "again"));
    const stream = await client.open(resolved("openai", server.url), ask("x"), never);
    assert.equal(stream.attempts, 2, `status ${status}`);
    await collect(stream);
  }
  for (const status of [400, 404]) {
    await using server = openai.startFakeOpenAI();
    server.enqueue(openai.httpError(status, `bad request ${status}`));
    const { error } = await timed(() =>
      client.open(resolved("openai", server.url), ask("x"), never)
    );
    const e = assertModelError(error, `model_http_${status}`, 1);
    assert.match(e.message, new RegExp(`bad request ${status}`));
    assert.equal(server.requests.length, 1);
  }
});

Deno.test("retry: 401 and 403 are model_auth and not retried", async () => {
  for (const status of [401, 403]) {
    await using server = openai.startFakeOpenAI();
    server.enqueue(openai.httpError(status, "Incorrect API key provided"));
    const { error } = await timed(() =>
      client.open(resolved("openai", server.url, { api_key: undefined }), ask("x"), never)
    );
    const e = assertModelError(error, "model_auth", 1);
    assert.match(e.message, /Incorrect API key/);
    assert.equal(server.requests.length, 1);
  }
});

Deno.test("retry: a non-JSON error body still gives a message", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue({ kind: "error", status: 400, body: "plain text failure" });
  const { error } = await timed(() => client.open(resolved("openai", server.url), ask("x"), never));
  const e = assertModelError(error, "model_http_400", 1);
  assert.match(e.message, /plain text failure/);
});

Deno.test("retry: Retry-After in seconds is honoured", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.httpError(429, "Rate limit reached", { "retry-after": "1" }));
  const model = resolved("openai", server.url, {
    retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 5000 },
  });
  const { ms, value } = await timed(() => client.open(model, ask("x"), never));
  assert.equal(value?.attempts, 2);
  assert.ok(ms >= 1000, `elapsed ${ms}`);
  assert.ok(ms < 2500, `elapsed ${ms}`);
  await collect(value!);
});

Deno.test("retry: Retry-After is capped at max_backoff", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.httpError(429, "slow down", { "retry-after": "30" }));
  const model = resolved("openai", server.url, {
    retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 200 },
  });
  const { ms, value } = await timed(() => client.open(model, ask("x"), never));
  assert.equal(value?.attempts, 2);
  assert.ok(ms >= 200, `elapsed ${ms}`);
  assert.ok(ms < 1500, `elapsed ${ms}`);
  await collect(value!);
});

Deno.test("retry: connection refused is model_connection after max_attempts", async () => {
  const model = resolved("openai", `http://127.0.0.1:${closedPort()}/v1`, {
    retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 10 },
  });
  const { error } = await timed(() => client.open(model, ask("x"), never));
  assertModelError(error, "model_connection", 2);
});

Deno.test("abort: while waiting for headers rejects at once with the signal's reason", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue({ kind: "hang" });
  const ac = new AbortController();
  // Abort once the server holds the request (it never answers).
  void eventually(() => server.requests.length === 1, { interval: 5 })
    .then(() => ac.abort(new Error("cancelled by test")));
  const { ms, error } = await timed(() =>
    client.open(resolved("openai", server.url), ask("x"), ac.signal)
  );
  assert.ok(error instanceof Error && error.message === "cancelled by test", String(error));
  assert.ok(ms < 1000, `elapsed ${ms}`);
  assert.equal(server.requests.length, 1);
});

Deno.test("abort: during the backoff stops requesting", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.httpError(503, "busy"));
  const ac = new AbortController();
  const model = resolved("openai", server.url, {
    retry: { max_attempts: 3, initial_backoff: 5000, max_backoff: 5000 },
  });
  // Abort when the first attempt has failed and the 5 s backoff begins.
  const backingOff = createModelClient({
    env: {},
    metrics: { onAttempt: (info) => info.retrying && ac.abort() },
  });
  const { ms, error } = await timed(() => backingOff.open(model, ask("x"), ac.signal));
  assert.ok(error instanceof DOMException && error.name === "AbortError", String(error));
  assert.ok(ms < 1500, `elapsed ${ms}`);
  assert.equal(server.requests.length, 1);
});

Deno.test("abort: an already aborted signal never requests", async () => {
  await using server = openai.startFakeOpenAI();
  const ac = new AbortController();
  ac.abort();
  const { error } = await timed(() =>
    client.open(resolved("openai", server.url), ask("x"), ac.signal)
  );
  assert.ok(error instanceof DOMException && error.name === "AbortError");
  assert.equal(server.requests.length, 0);
});

Deno.test("metrics: onAttempt per attempt and onFirstToken once", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.httpError(500, "once"));
  const attempts: ModelAttemptInfo[] = [];
  const first: number[] = [];
  const metered = createModelClient({
    env: {},
    metrics: { onAttempt: (i) => attempts.push(i), onFirstToken: (i) => first.push(i.ms) },
  });
  await collect(await metered.open(resolved("openai", server.url), ask("x"), never));
  assert.deepEqual(attempts.map((a) => [a.attempt, a.ok, a.code, a.status, a.retrying]), [
    [1, false, "model_http_500", 500, true],
    [2, true, undefined, undefined, undefined],
  ]);
  assert.equal(first.length, 1);
});

Deno.test("anthropic: text and tool_use stream; request in the Messages format", async () => {
  await using server = anthropic.startFakeAnthropic();
  server.enqueue(anthropic.message([
    { type: "text", pieces: ["Let me ", "check."] },
    { type: "tool_use", id: "toolu_1", name: "weather", pieces: ['{"city"', ': "Rome"}'] },
  ]));
  const tools = [{
    name: "weather",
    description: "Weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  }];
  const model = resolved("anthropic", server.url, {
    inference_params: { max_tokens: 256, top_k: 3 },
  });
  const stream = await client.open(model, ask("weather in Rome?", { tools }), never);
  const events = await collect(stream);
  assert.equal(textOf(events), "Let me check.");
  assert.deepEqual(events.filter((e) => e.type !== "text-delta"), [
    { type: "tool-call-start", id: "toolu_1", name: "weather" },
    { type: "tool-call-delta", id: "toolu_1", delta: '{"city"' },
    { type: "tool-call-delta", id: "toolu_1", delta: ': "Rome"}' },
    { type: "tool-call", id: "toolu_1", name: "weather", arguments: { city: "Rome" } },
    {
      type: "finish",
      reason: "tool-calls",
      raw_reason: "tool_use",
      usage: { input_tokens: 12, output_tokens: 9, cached_input_tokens: 0 },
    },
  ]);
  const req = server.requests[0];
  assert.equal(req.path, "/v1/messages");
  assert.equal(req.headers.get("x-api-key"), "test-key");
  assert.equal(req.body.model, "anthropic-fake-model");
  assert.equal(req.body.max_tokens, 256);
  assert.equal(req.body.top_k, 3);
  assert.deepEqual(req.body.system, [{ type: "text", text: "You are a test." }]);
  assert.deepEqual(req.body.messages, [
    { role: "user", content: [{ type: "text", text: "weather in Rome?" }] },
  ]);
  const tool = (req.body.tools as Record<string, unknown>[])[0];
  assert.equal(tool.name, "weather");
  assert.deepEqual(tool.input_schema, tools[0].parameters);
});

Deno.test("anthropic: 529 overloaded and 429 are retried", async () => {
  await using server = anthropic.startFakeAnthropic();
  server.enqueue(
    anthropic.httpError(529, "overloaded_error", "Overloaded"),
    anthropic.httpError(429, "rate_limit_error", "Too many", { "retry-after": "0" }),
  );
  const stream = await client.open(resolved("anthropic", server.url), ask("x"), never);
  assert.equal(stream.attempts, 3);
  assert.equal(textOf(await collect(stream)), "Hi");
});

Deno.test("anthropic: 529 on every attempt is model_http_529 with the message", async () => {
  await using server = anthropic.startFakeAnthropic();
  for (let i = 0; i < 3; i++) {
    server.enqueue(anthropic.httpError(529, "overloaded_error", "Overloaded"));
  }
  const { error } = await timed(() =>
    client.open(resolved("anthropic", server.url), ask("x"), never)
  );
  const e = assertModelError(error, "model_http_529", 3);
  assert.match(e.message, /Overloaded/);
});

Deno.test("anthropic: an overloaded error event before any output is retried", async () => {
  await using server = anthropic.startFakeAnthropic();
  server.enqueue(anthropic.streamError("overloaded_error", "Overloaded"));
  const stream = await client.open(resolved("anthropic", server.url), ask("x"), never);
  assert.equal(stream.attempts, 2);
  assert.equal(textOf(await collect(stream)), "Hi");
});

Deno.test("anthropic: an error event after output fails from the iterator, no retry", async () => {
  await using server = anthropic.startFakeAnthropic();
  server.enqueue(
    anthropic.streamError("overloaded_error", "Overloaded midway", [
      { type: "text", pieces: ["partial ", "answer"] },
    ]),
  );
  const stream = await client.open(resolved("anthropic", server.url), ask("x"), never);
  const seen: ModelEvent[] = [];
  const { error } = await timed(async () => {
    for await (const e of stream.events) seen.push(e);
  });
  const e = assertModelError(error, "model_stream", 1);
  assert.match(e.message, /Overloaded midway/);
  assert.equal(textOf(seen), "partial answer");
  assert.equal(server.requests.length, 1);
});

Deno.test("anthropic: tool results go back as tool_result blocks", async () => {
  await using server = anthropic.startFakeAnthropic();
  const messages = [
    msg("user", "weather?"),
    msg("assistant", "Checking.", {
      tool_calls: [{ id: "toolu_7", name: "weather", arguments: { city: "Rome" } }],
    }),
    msg("tool", "sunny", { tool_call_id: "toolu_7" }),
  ];
  await collect(
    await client.open(
      resolved("anthropic", server.url),
      { system: "", messages, tools: [] },
      never,
    ),
  );
  const sent = server.requests[0].body.messages as { role: string; content: unknown[] }[];
  assert.equal(sent.length, 3);
  assert.deepEqual(sent[1].content[1], {
    type: "tool_use",
    id: "toolu_7",
    name: "weather",
    input: { city: "Rome" },
  });
  assert.deepEqual(sent[2], {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "toolu_7", content: "sunny" }],
  });
});

Deno.test("anthropic: a system message after the conversation began is sent as user text", async () => {
  await using server = anthropic.startFakeAnthropic();
  const messages = [msg("system", "Be brief."), msg("user", "hi"), msg("system", "Now be formal.")];
  await collect(
    await client.open(
      resolved("anthropic", server.url),
      { system: "Base.", messages, tools: [] },
      never,
    ),
  );
  const body = server.requests[0].body;
  assert.deepEqual(body.system, [{ type: "text", text: "Base." }, {
    type: "text",
    text: "Be brief.",
  }]);
  assert.deepEqual(body.messages, [{
    role: "user",
    content: [{ type: "text", text: "hi" }, { type: "text", text: "[system] Now be formal." }],
  }]);
});

Deno.test("google: text and a whole function call; generateContent wire format", async () => {
  await using server = startFakeServer("/v1beta", () => ({
    kind: "sse",
    frames: [
      { data: { candidates: [{ content: { role: "model", parts: [{ text: "Looking " }] } }] } },
      { data: { candidates: [{ content: { role: "model", parts: [{ text: "up." }] } }] } },
      {
        data: {
          candidates: [{
            content: {
              role: "model",
              parts: [{ functionCall: { name: "weather", args: { city: "Lima" } } }],
            },
            finishReason: "STOP",
          }],
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 },
        },
      },
    ],
  }));
  const tools = [{
    name: "weather",
    description: "Weather",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  }];
  const model = resolved("google", server.url, { inference_params: { top_k: 4, seed: 1 } });
  const events = await collect(await client.open(model, ask("weather?", { tools }), never));
  assert.equal(textOf(events), "Looking up.");
  const call = events.filter((e) => e.type.startsWith("tool-call"));
  assert.equal(call.length, 3, "start, one delta, call even when the call comes whole");
  assert.deepEqual(call[2], {
    type: "tool-call",
    id: (call[0] as { id: string }).id,
    name: "weather",
    arguments: { city: "Lima" },
  });
  assert.deepEqual(events.at(-1), {
    type: "finish",
    reason: "tool-calls",
    raw_reason: "STOP",
    usage: { input_tokens: 5, output_tokens: 4, reasoning_tokens: 0, cached_input_tokens: 0 },
  });
  const req = server.requests[0];
  assert.equal(req.path, "/v1beta/models/google-fake-model:streamGenerateContent");
  assert.equal(req.headers.get("x-goog-api-key"), "test-key");
  assert.deepEqual(req.body.systemInstruction, { parts: [{ text: "You are a test." }] });
  const config = req.body.generationConfig as Record<string, unknown>;
  assert.equal(config.topK, 4);
  assert.equal(config.seed, 1);
});

Deno.test("openai: an error frame before any output is retried when the provider says so", async () => {
  await using server = openai.startFakeOpenAI();
  const errorFrame = (type: string, message: string) => ({
    kind: "sse" as const,
    frames: [{ data: { error: { message, type, code: type, param: null } } }],
  });
  server.enqueue(errorFrame("server_error", "The server is overloaded"));
  const stream = await client.open(resolved("openai", server.url), ask("x"), never);
  assert.equal(stream.attempts, 2);
  await collect(stream);

  server.enqueue(errorFrame("insufficient_quota", "You exceeded your current quota"));
  const { error } = await timed(() => client.open(resolved("openai", server.url), ask("x"), never));
  const e = assertModelError(error, "model_stream", 1);
  assert.match(e.message, /exceeded your current quota/);
  assert.equal(server.requests.length, 3);
});
