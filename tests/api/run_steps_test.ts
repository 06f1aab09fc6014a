/** The bounds of a run's step records: values within the limit whole, longer ones cut and marked. */
import assert from "node:assert/strict";
import { boundedJson, boundedText, RunStepSchema } from "../../src/api/run_steps.ts";

Deno.test("run steps: a value within the limit is kept whole, with its size", () => {
  assert.deepEqual(boundedJson({ a: 1 }, 100), { value: { a: 1 }, truncated: false, bytes: 7 });
  assert.deepEqual(boundedJson("héllo", 6), { value: "héllo", truncated: false, bytes: 6 });
});

Deno.test("run steps: a longer value becomes its first bytes as text, cut between characters", () => {
  const cut = boundedJson({ text: "x".repeat(50) }, 20);
  assert.deepEqual(cut, { value: '{"text":"xxxxxxxxxxx', truncated: true, bytes: 61 });
  // "é" is two bytes: a limit inside it drops it whole.
  assert.deepEqual(boundedText("aé", 2), { value: "a", truncated: true, bytes: 3 });
  assert.deepEqual(boundedText("€€", 4), { value: "€", truncated: true, bytes: 6 });
});

Deno.test("run steps: the wire schema takes a model step and a tool step", () => {
  const model = {
    step: 1,
    kind: "model",
    attempt: 1,
    started_at: "2026-11-26T16:00:00.000Z",
    duration_ms: 12.5,
    provider: "echo",
    model: "echo",
    first_token_ms: 3.1,
    request: { body: { prompt: [] }, bytes: 13, truncated: false },
  };
  assert.deepEqual(RunStepSchema.parse(model), model);
  const tools = {
    step: 2,
    kind: "tools",
    attempt: 1,
    started_at: "2026-11-26T16:00:00.100Z",
    duration_ms: 4,
    tool_calls: [{
      tool_call_id: "c1",
      tool_name: "add",
      arguments: { a: 1 },
      result: 2,
      is_error: false,
      started_at: "2026-11-26T16:00:00.101Z",
      duration_ms: 3.9,
    }],
  };
  assert.deepEqual(RunStepSchema.parse(tools), tools);
});
