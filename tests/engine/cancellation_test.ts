/**
 * Cancelling a run: mid-stream it ends promptly, `cancelled`, keeping the partial text and a
 * checkpoint; during a tool the tool gets the signal, and the next run closes the call it left.
 */
import assert from "node:assert/strict";
import { call, describe, FakeTool, Harness, say, sleep, user } from "./fakes.ts";

Deno.test("cancellation mid-stream: cancelled promptly, partial text and a checkpoint kept", async () => {
  await using h = await Harness.create({
    turns: [[
      { type: "text-delta", delta: "Once upon " },
      { wait: 10_000 },
      { type: "text-delta", delta: "a time" },
    ]],
  });
  const controller = new AbortController();
  const began = performance.now();
  const out = await h.run({ session_id: "s1" }, {
    signal: controller.signal,
    onEvent: (e) => {
      if (e.kind === "text_message_content") controller.abort(new Error("cancelled"));
    },
  });
  assert.ok(performance.now() - began < 2_000, "stops promptly");
  assert.equal(out.finished.status, "cancelled");
  assert.equal(out.finished.error, null);
  assert.deepEqual(out.kinds.slice(-3), ["text_message_end", "step_finished", "run_finished"]);
  assert.deepEqual(await h.transcript("s1"), ["user:hi", "assistant:Once upon "]);
  const run = await h.store.getRun(h.tenant, out.run_id);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.equal(run?.checkpoint_id, cp?.checkpoint_id);
  assert.deepEqual(describe(cp!.state.messages), ["user:hi", "assistant:Once upon "]);
});

Deno.test("cancellation during a tool: the tool gets the signal; the next run closes its call", async () => {
  const controller = new AbortController();
  const slow = new FakeTool("slow", async (_args, ctx) => {
    // The run is cancelled while its tool runs.
    controller.abort();
    await sleep(10_000, ctx.signal).catch(() => {});
    return { result: "late", is_error: false };
  });
  await using h = await Harness.create({
    tools: [slow],
    turns: [call({ id: "c1", name: "slow" }), say("moving on")],
  });
  const out = await h.run({ session_id: "s1" }, { signal: controller.signal });
  assert.equal(out.finished.status, "cancelled");
  assert.equal(slow.calls[0].ctx.signal.aborted, true);
  assert.equal(out.kinds.includes("tool_call_result"), false);
  assert.deepEqual(out.kinds.slice(-2), ["step_finished", "run_finished"]);

  const next = await h.run({ session_id: "s1", messages: [user("again")] });
  assert.equal(next.finished.status, "completed");
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=slow#c1",
    'tool:{"error":"the run that made this call ended before it"}',
    "user:again",
    "assistant:moving on",
  ]);
});
