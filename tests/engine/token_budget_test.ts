/**
 * A run's token budget (manifest `agent.token_budget`, request `token_budget`, the lower wins):
 * a run whose model steps used more than it ends `failed` with `token_budget_exceeded` before its
 * next model step, through the real server on every store kind.
 */
import assert from "node:assert/strict";
import { type EventData, readEvents, startTestServer, storeKinds, userText } from "../_kit/mod.ts";

const fixtures = new URL("../tools/fixtures/", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Loose = any;

const manifest = (token_budget?: number) => ({
  agent: {
    name: "budget",
    model: { provider: "echo" },
    capabilities: ["basic"],
    ...(token_budget ? { token_budget } : {}),
  },
  capability: { basic: { tools: ["progress"] } },
  tool: {
    progress: { kind: "javascript", module: `${fixtures}js_tools.ts`, function: "progress" },
  },
});

for (const store of storeKinds) {
  Deno.test(`token budget: a run past it fails before its next model step (${store})`, async () => {
    await using t = await startTestServer({ store, manifest: manifest(1_000_000) });
    const run = async (body: Record<string, unknown>): Promise<EventData[]> => {
      const res = await t.fetch("/v1/runs", { method: "POST", json: body });
      assert.equal(res.status, 200, await res.clone().text());
      return await readEvents(res);
    };
    // Within the agent's budget: the tool runs and the model answers its result (two steps).
    const within = await run({
      session_id: "a",
      messages: [userText('/call progress {"task":"x"}')],
    });
    assert.equal(within.at(-1)!.status, "completed");
    const used = within.at(-1)!.usage as Loose;
    const total = used.input_tokens + used.output_tokens;
    assert.ok(total > 2);

    // The run's own budget is lower: after the first step (its tool call), the run stops.
    const cut = await run({
      session_id: "b",
      token_budget: 2,
      messages: [userText('/call progress {"task":"x"}')],
    });
    const end = cut.at(-1)!;
    assert.equal(end.kind, "run_finished");
    assert.equal(end.status, "failed");
    const error = end.error as Loose;
    assert.equal(error.code, "token_budget_exceeded");
    assert.match(error.message, /more than its budget of 2$/);
    // The tool ran (its call was made before the budget ran out), the model was not called again.
    assert.equal(cut.filter((e) => e.kind === "tool_call_result").length, 1);
    const record = await (await t.fetch(`/v1/runs/${end.run_id}`)).json();
    assert.equal(record.status, "failed");
    assert.equal(record.error.code, "token_budget_exceeded");
    assert.equal(record.model_steps.length, 1);
    assert.equal(record.finish_reason, "tool_calls");
    const messages = await (await t.fetch("/v1/sessions/b/messages")).json();
    assert.deepEqual(messages.items.map((m: Loose) => m.role), ["user", "assistant", "tool"]);

    // A bad budget is a 422 naming the field.
    const bad = await t.fetch("/v1/runs", {
      method: "POST",
      json: { session_id: "c", token_budget: 0, messages: [userText("hi")] },
    });
    assert.equal(bad.status, 422);
    assert.match(await bad.text(), /token_budget/);
  });
}

Deno.test("token budget: a run's budget never raises the agent's", async () => {
  await using t = await startTestServer({ manifest: manifest(2) });
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: { token_budget: 1_000_000, messages: [userText('/call progress {"task":"x"}')] },
  });
  const end = (await readEvents(res)).at(-1)!;
  assert.equal(end.status, "failed");
  assert.equal((end.error as Loose).code, "token_budget_exceeded");
});
