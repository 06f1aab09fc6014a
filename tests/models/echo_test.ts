/**
 * The offline echo provider through the real model client.
 */
import assert from "node:assert/strict";
import { createModelClient, resolveModel } from "../../src/models/mod.ts";
import type { ModelEvent, ModelRequest, ResolvedModel } from "../../src/models/mod.ts";
import { echoTokens } from "../../src/models/echo.ts";
import { ask, collect, msg, textOf, timed } from "./helpers.ts";

const client = createModelClient({ env: {} });
const never = new AbortController().signal;
const echo: ResolvedModel = resolveModel({ provider: "echo" }, null, {});

async function run(request: ModelRequest, model: ResolvedModel = echo): Promise<ModelEvent[]> {
  return collect(await client.open(model, request, never));
}

Deno.test("echo: is the default provider and model", () => {
  assert.equal(echo.provider, "echo");
  assert.equal(echo.model, "echo");
});

Deno.test("echo: streams the last user message word by word", async () => {
  const events = await run({
    system: "ignored",
    messages: [msg("user", "first"), msg("assistant", "ok"), msg("user", "Hello  big\nworld ")],
    tools: [],
  });
  const deltas = events.flatMap((e) => e.type === "text-delta" ? [e.delta] : []);
  assert.deepEqual(deltas, ["Hello  ", "big\n", "world "]);
  assert.deepEqual(events.at(-1)?.type, "finish");
  assert.equal((events.at(-1) as { reason: string }).reason, "stop");
});

Deno.test("echo: word tokens concatenate to the original text", () => {
  for (const text of ["", " ", "  lead", "a b  c\n", "one"]) {
    assert.equal(echoTokens(text).join(""), text);
  }
  assert.deepEqual(echoTokens("  a b"), ["  a ", "b"]);
});

Deno.test("echo: /call answers with a tool call streamed in pieces", async () => {
  const events = await run(ask('/call get_weather {"city": "Paris", "days": 3}'));
  const start = events.find((e) => e.type === "tool-call-start");
  assert.ok(start && start.type === "tool-call-start");
  assert.equal(start.name, "get_weather");
  const deltas = events.flatMap((e) => e.type === "tool-call-delta" ? [e.delta] : []);
  assert.ok(deltas.length > 1, "arguments arrive in several deltas");
  assert.deepEqual(JSON.parse(deltas.join("")), { city: "Paris", days: 3 });
  const call = events.find((e) => e.type === "tool-call");
  assert.deepEqual(call, {
    type: "tool-call",
    id: start.id,
    name: "get_weather",
    arguments: { city: "Paris", days: 3 },
  });
  assert.equal((events.at(-1) as { reason: string }).reason, "tool-calls");
  assert.equal(textOf(events), "");
});

Deno.test("echo: /call without JSON means {}; several lines make several calls", async () => {
  const events = await run(ask('Let me look.\n/call now\n/call add {"a":1,"b":2}'));
  const calls = events.filter((e) => e.type === "tool-call");
  assert.deepEqual(calls.map((c) => c.type === "tool-call" && [c.name, c.arguments]), [
    ["now", {}],
    ["add", { a: 1, b: 2 }],
  ]);
  const ids = calls.map((c) => c.type === "tool-call" && c.id);
  assert.notEqual(ids[0], ids[1]);
  assert.equal(textOf(events), "Let me look.\n");
});

Deno.test("echo: invalid /call JSON answers with an explanation instead of a call", async () => {
  const events = await run(ask("/call add {oops"));
  assert.equal(events.filter((e) => e.type === "tool-call").length, 0);
  assert.match(textOf(events), /cannot parse \/call arguments of add/);
});

Deno.test("echo: after a tool result it reports the result, naming the tool", async () => {
  const events = await run({
    system: "",
    messages: [
      msg("user", '/call add {"a":1}'),
      msg("assistant", "", { tool_calls: [{ id: "c1", name: "add", arguments: { a: 1 } }] }),
      msg("tool", [{ type: "data", value: { sum: 3 } }], { tool_call_id: "c1" }),
    ],
    tools: [],
  });
  assert.equal(textOf(events), 'add returned: {"sum":3}');
  assert.equal(events.filter((e) => e.type === "tool-call").length, 0);
});

Deno.test("echo: several tool results give one line each", async () => {
  const events = await run({
    system: "",
    messages: [
      msg("user", "/call a\n/call b"),
      msg("assistant", "", {
        tool_calls: [{ id: "x", name: "a", arguments: {} }, { id: "y", name: "b", arguments: {} }],
      }),
      msg("tool", "one", { tool_call_id: "x" }),
      msg("tool", [{ type: "data", value: [2] }], { tool_call_id: "y" }),
    ],
    tools: [],
  });
  assert.equal(textOf(events), "a returned: one\nb returned: [2]");
});

Deno.test("echo: provider_params.delay_ms spaces the tokens", async () => {
  const slow = resolveModel(
    { provider: "echo", inference_params: { provider_params: { delay_ms: 40 } } },
    null,
    {},
  );
  const { ms, value } = await timed(() => run(ask("a b c d e"), slow));
  assert.equal(textOf(value!), "a b c d e");
  assert.ok(ms >= 4 * 40, `elapsed ${ms}`);
});

Deno.test("echo: abort mid-stream ends the iterator with the reason", async () => {
  const slow = resolveModel(
    { provider: "echo", inference_params: { provider_params: { delay_ms: 1000 } } },
    null,
    {},
  );
  const ac = new AbortController();
  const stream = await client.open(slow, ask("a b c"), ac.signal);
  const { ms, error } = await timed(async () => {
    for await (const e of stream.events) if (e.type === "text-delta") ac.abort(new Error("stop"));
  });
  assert.ok(error instanceof Error && error.message === "stop");
  assert.ok(ms < 500, `elapsed ${ms}`);
});
