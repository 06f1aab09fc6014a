/**
 * One model step's stream as run events (engine/model_step.ts): text, reasoning into the answer,
 * a call streamed and a call given whole, the finish and the warnings kept.
 */
import assert from "node:assert/strict";
import { Answer } from "../../src/engine/answer.ts";
import { streamStep } from "../../src/engine/model_step.ts";
import { OpenEvents } from "../../src/engine/open_events.ts";
import type { ModelEvent } from "../../src/models/mod.ts";
import type { RunEvent } from "../../src/api/events.ts";

async function* from(events: ModelEvent[]): AsyncGenerator<ModelEvent> {
  yield* events;
}

async function drive(events: ModelEvent[]) {
  const answer = new Answer();
  const sink = {
    open: new OpenEvents(),
    answer,
    message_id: "m1",
    showReasoning: true,
    signal: new AbortController().signal,
  };
  const gen = streamStep(from(events), sink);
  const out: RunEvent[] = [];
  for (;;) {
    const next = await gen.next();
    if (next.done) return { out, answer, result: next.value };
    out.push(next.value);
  }
}

Deno.test("model step: text, reasoning, calls, finish and warnings", async () => {
  const { out, answer, result } = await drive([
    { type: "warnings", warnings: ["other: placeholder"] },
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-delta", id: "r", delta: "hmm" },
    { type: "reasoning-end", id: "r", provider_metadata: { anthropic: { signature: "s" } } },
    { type: "text-delta", delta: "Hi" },
    { type: "tool-call-start", id: "c1", name: "add" },
    { type: "tool-call-delta", id: "c1", delta: '{"a":1}' },
    { type: "tool-call", id: "c1", name: "add", arguments: { a: 1 } },
    { type: "tool-call", id: "c2", name: "now", arguments: {} },
    { type: "finish", reason: "tool-calls", raw_reason: "tool_use", usage: { input_tokens: 3 } },
  ]);
  assert.deepEqual(out.map((e) => e.kind), [
    "reasoning_message_start",
    "reasoning_message_content",
    "reasoning_message_end",
    "text_message_start",
    "text_message_content",
    "text_message_end",
    "tool_call_start",
    "tool_call_args",
    "tool_call_end",
    "tool_call_start",
    "tool_call_args",
    "tool_call_end",
  ]);
  assert.deepEqual(answer.parts()[0], {
    type: "reasoning",
    value: "hmm",
    provider_metadata: { anthropic: { signature: "s" } },
  });
  assert.deepEqual(result.calls.map((c) => c.id), ["c1", "c2"]);
  assert.deepEqual(result.finish, {
    reason: "tool-calls",
    raw_reason: "tool_use",
    usage: { input_tokens: 3 },
  });
  assert.deepEqual(result.warnings, ["other: placeholder"]);
});

Deno.test("model step: a call never completed and a provider-run call", async () => {
  const { out, result } = await drive([
    {
      type: "provider-tool-call",
      id: "p1",
      name: "web_search",
      arguments: { query: "q" },
      provider_metadata: { anthropic: { type: "x" } },
    },
    { type: "provider-tool-result", id: "p1", name: "web_search", result: [1], is_error: false },
    { type: "tool-call-start", id: "c1", name: "make_file" },
    { type: "tool-call-delta", id: "c1", delta: '{"pa' },
    { type: "finish", reason: "length", usage: {} },
  ]);
  assert.deepEqual(out.map((e) => e.kind), [
    "tool_call_start",
    "tool_call_args",
    "tool_call_end",
    "tool_call_start",
    "tool_call_args",
  ]);
  assert.equal((out[0] as { provider_executed?: boolean }).provider_executed, true);
  assert.deepEqual(result.calls, []);
  assert.deepEqual(result.incomplete, [{ id: "c1", name: "make_file" }]);
  assert.deepEqual(result.provider, [{
    call: {
      id: "p1",
      name: "web_search",
      arguments: { query: "q" },
      provider_executed: true,
      provider_metadata: { anthropic: { type: "x" } },
    },
    result: { value: [1], is_error: false },
  }]);
});
