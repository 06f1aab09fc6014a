/**
 * `GET /v1/runs/{id}/steps`: what a run did step by step, through a real server and an
 * OpenAI-compatible provider. A model step has its timings and the request exactly as the
 * provider received it, with every secret of the manifest and the environment masked (in the
 * system prompt and in the headers); a tool step has its call's input, output and duration. The
 * request is kept only with `runtime.record_model_requests`; another tenant's run is not found.
 */
import assert from "node:assert/strict";
import { readEvents, startTestServer, userText } from "../_kit/mod.ts";
import { httpError, startFakeOpenAI, text, toolCalls } from "../models/fake_openai.ts";

const fixtures = new URL("../tools/fixtures/", import.meta.url).pathname;
const MANIFEST_SECRET = "sk-manifest-steps-0123456789";
const ENV_NAME = "AGENTD_RUN_STEPS_TEST_TOKEN";
const ENV_SECRET = "env-steps-secret-0123456789";

function manifest(url: string, record: boolean) {
  return {
    agent: {
      name: "steps",
      instructions: `Tickets use ${MANIFEST_SECRET}; the vault says ${ENV_SECRET}.`,
      model: { provider: "openai", model: "gpt-steps", api_key: MANIFEST_SECRET, base_url: url },
      capabilities: ["basic"],
    },
    capability: { basic: { tools: ["progress"] } },
    tool: {
      progress: { kind: "javascript", module: `${fixtures}js_tools.ts`, function: "progress" },
    },
    runtime: { record_model_requests: record },
  };
}

Deno.test("run steps: timings, the model request with secrets masked, tool calls", async () => {
  Deno.env.set(ENV_NAME, ENV_SECRET);
  try {
    await using fake = startFakeOpenAI();
    fake.enqueue(
      toolCalls([{ id: "call_1", name: "progress", pieces: ['{"task":', '"build"}'] }]),
      text(["Built", "."]),
    );
    await using t = await startTestServer({ manifest: manifest(fake.url, true) });
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: { messages: [userText("go")], context: { counter: 1 } },
    });
    const events = await readEvents(res);
    assert.equal(events.at(-1)!.status, "completed", JSON.stringify(events.at(-1)));
    const runId = events[0].run_id as string;

    const steps = await t.fetch(`/v1/runs/${runId}/steps`);
    assert.equal(steps.status, 200);
    const raw = await steps.text();
    // No secret anywhere, in whatever form the request carried it.
    for (const secret of [MANIFEST_SECRET, ENV_SECRET]) assert.ok(!raw.includes(secret), secret);
    const { data } = JSON.parse(raw);
    assert.deepEqual(data.map((s: { step: number; kind: string }) => [s.step, s.kind]), [
      [1, "model"],
      [2, "tools"],
      [3, "model"],
    ]);
    const [first, tools, last] = data;
    for (const step of data) {
      assert.ok(Date.parse(step.started_at) > 0, step.started_at);
      assert.ok(step.duration_ms >= 0);
      assert.equal(step.attempt, 1);
    }
    assert.equal(first.provider, "openai");
    assert.equal(first.model, "gpt-steps");
    assert.ok(first.first_token_ms >= 0 && first.first_token_ms <= first.duration_ms);

    // The request as the provider received it: what the fake server recorded, masked.
    const received = fake.requests[0];
    assert.equal(first.request.url, `${fake.url}/chat/completions`);
    assert.equal(first.request.method, "POST");
    assert.equal(first.request.headers.authorization, "****");
    assert.equal(first.request.truncated, false);
    const masked = JSON.parse(
      JSON.stringify(received.body).replaceAll(MANIFEST_SECRET, "[redacted]")
        .replaceAll(ENV_SECRET, "[redacted]"),
    );
    assert.deepEqual(first.request.body, masked);
    assert.equal(
      first.request.body.messages[0].content,
      "Tickets use [redacted]; the vault says [redacted].",
    );
    assert.equal(first.request.body.tools[0].function.name, "progress");
    // The second model request carries the tool result back.
    assert.ok(
      last.request.body.messages.some((m: { role: string }) => m.role === "tool"),
      JSON.stringify(last.request.body.messages),
    );

    // The tool step: the call's input, output and duration.
    assert.equal(tools.tool_calls.length, 1);
    const call = tools.tool_calls[0];
    assert.equal(call.tool_call_id, "call_1");
    assert.equal(call.tool_name, "progress");
    assert.deepEqual(call.arguments, { task: "build" });
    assert.equal(call.is_error, false, JSON.stringify(call));
    assert.ok(call.duration_ms >= 0 && call.duration_ms <= tools.duration_ms);
    const stored = events.find((e) => e.kind === "tool_call_result")!;
    assert.deepEqual(call.result, stored.content);
    // What it emitted on the way (the fixture reports progress three times).
    assert.deepEqual(
      call.emits.map((e: { name: string; value: { value: number } }) => [e.name, e.value.value]),
      [["progress", 0], ["progress", 0.5], ["progress", 1]],
    );

    // Another tenant does not see the run; an unknown run is not found.
    const other = await t.fetch(`/v1/runs/${runId}/steps`, { headers: { "x-tenant-id": "other" } });
    assert.equal(other.status, 404);
    assert.equal((await other.json()).code, 404002);
    const unknown = await t.fetch("/v1/runs/nope/steps");
    assert.equal(unknown.status, 404);
    await unknown.body?.cancel();

    // Deleting the session deletes its runs' steps.
    const deleted = await t.fetch(`/v1/sessions/${events[0].session_id}`, { method: "DELETE" });
    assert.equal(deleted.status, 204);
    const gone = await t.fetch(`/v1/runs/${runId}/steps`);
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  } finally {
    Deno.env.delete(ENV_NAME);
  }
});

Deno.test("run steps: without record_model_requests, timings and no request", async () => {
  await using fake = startFakeOpenAI();
  await using t = await startTestServer({ manifest: manifest(fake.url, false) });
  const res = await t.fetch("/v1/runs", { method: "POST", json: { messages: [userText("hi")] } });
  const events = await readEvents(res);
  const { data } = await (await t.fetch(`/v1/runs/${events[0].run_id}/steps`)).json();
  assert.equal(data.length, 1);
  assert.equal(data[0].kind, "model");
  assert.equal(data[0].request, null);
  assert.ok(data[0].first_token_ms >= 0);
});

Deno.test("run steps: a failed model call keeps its error and the request refused", async () => {
  await using fake = startFakeOpenAI();
  fake.enqueue(httpError(400, `the key ${MANIFEST_SECRET} may not use this model`));
  await using t = await startTestServer({ manifest: manifest(fake.url, true) });
  const res = await t.fetch("/v1/runs", { method: "POST", json: { messages: [userText("hi")] } });
  const events = await readEvents(res);
  assert.equal(events.at(-1)!.status, "failed");
  const raw = await (await t.fetch(`/v1/runs/${events[0].run_id}/steps`)).text();
  assert.ok(!raw.includes(MANIFEST_SECRET), raw);
  const { data } = JSON.parse(raw);
  assert.equal(data.length, 1);
  const [step] = data;
  assert.equal(step.kind, "model");
  assert.equal(step.first_token_ms, null);
  assert.equal(step.error.code, (events.at(-1)!.error as { code: string }).code);
  assert.match(step.error.message, /\[redacted\] may not use this model/);
  assert.equal(step.request.headers.authorization, "****");
  assert.equal(step.request.body.messages.at(-1).content, "hi");
});
