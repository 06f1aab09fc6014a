/**
 * A run's step records as the engine keeps them: a model step with its time to first output and,
 * when requests are recorded, the stream's request; a tool step with each call's input, output
 * and duration; each saved when its step ends, a failed save logged and never thrown.
 */
import assert from "node:assert/strict";
import type { RunStep } from "../../src/api/run_steps.ts";
import { makeEvent } from "../../src/api/events.ts";
import { StepTrace } from "../../src/engine/step_trace.ts";
import { createLogger } from "../../src/log.ts";
import type { ModelEvent, ModelStream } from "../../src/models/mod.ts";

function stream(events: ModelEvent[]): ModelStream {
  return {
    attempts: 1,
    establish_ms: 0,
    events: (async function* () {
      yield* events;
    })(),
    sent: (max) => ({ body: { max }, bytes: 2, truncated: false }),
  };
}

function trace(requests: boolean, save?: (runId: string, step: RunStep) => Promise<void>) {
  const saved: RunStep[] = [];
  const logs: string[] = [];
  const t = new StepTrace(
    { saveRunStep: save ?? ((_, step) => Promise.resolve(void saved.push(step))) },
    "r1",
    createLogger("debug", {}, (line) => logs.push(line)),
    { attempt: 2, requests, now: () => Date.UTC(2026, 10, 26, 16) },
  );
  return { t, saved, logs };
}

Deno.test("step trace: a model step keeps its request, first token and duration", async () => {
  const { t, saved } = trace(true);
  t.begin(3, "model", { provider: "echo", model: "echo" });
  const seen: string[] = [];
  for await (
    const ev of t.model(stream([
      { type: "warnings", warnings: [] },
      { type: "text-delta", delta: "hi" },
      { type: "finish", reason: "stop" },
    ]))
  ) seen.push(ev.type);
  await t.end();
  assert.deepEqual(seen, ["warnings", "text-delta", "finish"]);
  assert.equal(saved.length, 1);
  const [step] = saved;
  assert.equal(step.step, 3);
  assert.equal(step.kind, "model");
  assert.equal(step.attempt, 2);
  assert.equal(step.started_at, "2026-11-26T16:00:00.000Z");
  assert.deepEqual(step.request, { body: { max: 65_536 }, bytes: 2, truncated: false });
  assert.equal(typeof step.first_token_ms, "number");
  assert.ok(step.first_token_ms! <= step.duration_ms);
  // Ending again saves nothing more.
  await t.end();
  assert.equal(saved.length, 1);
});

Deno.test("step trace: without recording, no request; no output, no first token", async () => {
  const { t, saved } = trace(false);
  t.begin(1, "model", { provider: "p", model: "m" });
  for await (const _ of t.model(stream([{ type: "finish", reason: "stop" }]))) { /* drain */ }
  await t.end();
  assert.equal(saved[0].request, null);
  assert.equal(saved[0].first_token_ms, null);
});

Deno.test("step trace: a tool step keeps each call, bounded; a failed save is logged", async () => {
  const { t, saved } = trace(false);
  t.begin(2, "tools");
  const calling = async function* (result: unknown, is_error: boolean, emits: number) {
    for (let i = 0; i < emits; i++) yield makeEvent("custom", { name: "tick", value: i });
    return { result, is_error };
  };
  const seen: string[] = [];
  const tool = t.tool({ id: "c1", name: "add", arguments: { a: 1 } }, calling(2, false, 60));
  let next = await tool.next();
  for (; !next.done; next = await tool.next()) seen.push(next.value.kind);
  assert.deepEqual(next.value, { result: 2, is_error: false });
  assert.equal(seen.length, 60, "every event passes through");
  for await (
    const _ of t.tool(
      { id: "c2", name: "big", arguments: {} },
      calling("x".repeat(20_000), true, 0),
    )
  ) {
    // drained
  }
  await t.end();
  const calls = saved[0].tool_calls!;
  assert.equal(calls[0].emits!.length, 50, "the first 50 emits are kept");
  assert.deepEqual(calls[0].emits![1], { name: "tick", value: 1 });
  assert.equal(calls[1].emits, undefined);
  assert.deepEqual(calls.map((c) => [c.tool_call_id, c.tool_name, c.is_error]), [
    ["c1", "add", false],
    ["c2", "big", true],
  ]);
  assert.deepEqual([calls[0].arguments, calls[0].result], [{ a: 1 }, 2]);
  assert.equal((calls[1].result as string).length, 16_384);

  const failing = trace(false, () => Promise.reject(new Error("disk full")));
  failing.t.begin(1, "tools");
  await failing.t.end();
  assert.match(failing.logs.join("\n"), /could not save the step record of the run.*disk full/);
});

Deno.test("step trace: a tool call abandoned midway is closed, as yield* would", async () => {
  const { t } = trace(false);
  t.begin(1, "tools");
  let closed = false;
  const calling = async function* () {
    try {
      yield makeEvent("custom", { name: "tick", value: 0 });
      yield makeEvent("custom", { name: "tick", value: 1 });
      return { result: null, is_error: false };
    } finally {
      closed = true;
    }
  };
  const tool = t.tool({ id: "c1", name: "slow", arguments: {} }, calling());
  await tool.next();
  await tool.return(undefined as never);
  assert.ok(closed);
});
