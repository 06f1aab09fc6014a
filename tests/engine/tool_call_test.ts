/**
 * Server tool calls inside a run (engine/tool_call.ts): emits arrive live as `custom` events, state
 * updates become `state_delta`s (after an empty snapshot for a session without context), and a
 * tool that throws is an error result the model sees, logged scrubbed.
 */
import assert from "node:assert/strict";
import type { Tool } from "../../src/tools/types.ts";
import { call, FakeTool, Harness, only, say } from "./fakes.ts";

Deno.test("a tool's emits arrive live as custom events before its result", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const progress = new FakeTool("progress", async (_args, ctx) => {
    ctx.emit("progress", { pct: 10 });
    // The tool only finishes after the test saw the first emit: proof that emits are live.
    await released;
    ctx.emit("progress", { pct: 100 });
    return { result: "done", is_error: false };
  });
  await using h = await Harness.create({
    tools: [progress],
    turns: [call({ id: "c1", name: "progress" }), say("ok")],
  });
  const out = await h.run({ session_id: "s1" }, {
    onEvent: (e) => {
      if (e.kind === "custom") release();
    },
  });
  const tail = out.kinds.slice(out.kinds.indexOf("step_started", 3));
  assert.deepEqual(tail.slice(0, 5), [
    "step_started",
    "custom",
    "custom",
    "tool_call_result",
    "step_finished",
  ]);
  assert.deepEqual(only(out.events, "custom").map((e) => [e.name, e.value]), [
    ["progress", { pct: 10 }],
    ["progress", { pct: 100 }],
  ]);
  assert.equal(out.finished.status, "completed");
  // Emits are not persisted.
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=progress#c1",
    'tool:"done"',
    "assistant:ok",
  ]);
});

Deno.test("state updates: a patch gives a state_delta, a whole context a computed delta", async () => {
  const bump = new FakeTool("bump", (_args, ctx) =>
    Promise.resolve({
      result: "bumped",
      is_error: false,
      state: { patch: [{ op: "replace", path: "/count", value: Number(ctx.context?.count) + 1 }] },
    }));
  const reset = new FakeTool("reset", () =>
    Promise.resolve({
      result: "reset",
      is_error: false,
      state: { context: { count: 0, note: "reset" } },
    }));
  const broken = new FakeTool("broken", () =>
    Promise.resolve({
      result: "x",
      is_error: false,
      state: { patch: [{ op: "remove", path: "/missing" }] },
    }));
  await using h = await Harness.create({
    tools: [bump, reset, broken],
    turns: [
      call({ id: "c1", name: "bump" }),
      call({ id: "c2", name: "reset" }, { id: "c3", name: "broken" }),
      say("done"),
    ],
  });
  const out = await h.run({ session_id: "s1", context: { count: 1 } });
  assert.deepEqual(out.kinds.slice(0, 3), ["run_started", "messages_snapshot", "state_snapshot"]);
  assert.deepEqual(only(out.events, "state_snapshot")[0].context, { count: 1 });
  assert.deepEqual(only(out.events, "state_delta").map((e) => e.delta), [
    [{ op: "replace", path: "/count", value: 2 }],
    [{ op: "replace", path: "/count", value: 0 }, { op: "add", path: "/note", value: "reset" }],
  ]);
  // The delta follows the tool's result.
  const i = out.kinds.indexOf("state_delta");
  assert.equal(out.kinds[i - 1], "tool_call_result");
  // A patch that does not apply fails the call, not the run, and leaves the context alone.
  const failed = only(out.events, "tool_call_result").find((e) => e.tool_call_id === "c3")!;
  assert.equal(failed.is_error, true);
  assert.match(JSON.stringify(failed.content), /state update could not be applied/);

  const finalContext = { count: 0, note: "reset" };
  assert.deepEqual(out.finished.result, { text: "done", context: finalContext });
  // The tools step's checkpoint holds the new context.
  const page = await h.store.listCheckpoints(h.tenant, "s1", { per_page: 10 });
  const afterBump = page.items.find((c) => c.state.step === 2)!;
  assert.deepEqual(afterBump.state.context, { count: 2 });
  const last = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(last?.state.context, finalContext);
  // The tool saw the context of the time of its call.
  assert.deepEqual(bump.calls[0].ctx.context, { count: 1 });

  // The next run starts from the checkpoint's context.
  h.model.turns.push(say("again"));
  const next = await h.run({ session_id: "s1" });
  assert.deepEqual(only(next.events, "state_snapshot")[0].context, finalContext);
});

Deno.test("the first state update of a session without context: empty snapshot, then delta", async () => {
  const set = new FakeTool("set", () =>
    Promise.resolve({
      result: null,
      is_error: false,
      state: { patch: [{ op: "add", path: "/x", value: 1 }] },
    }));
  await using h = await Harness.create({
    tools: [set],
    turns: [call({ id: "c1", name: "set" }), say("k")],
  });
  const out = await h.run({ session_id: "s1" });
  assert.deepEqual(only(out.events, "state_snapshot").map((e) => e.context), [{}]);
  assert.deepEqual(only(out.events, "state_delta").map((e) => e.delta), [
    [{ op: "add", path: "/x", value: 1 }],
  ]);
  // Both follow the tool's result, in time too.
  const i = out.kinds.indexOf("state_snapshot");
  assert.deepEqual(out.kinds.slice(i - 1, i + 2), [
    "tool_call_result",
    "state_snapshot",
    "state_delta",
  ]);
  for (let k = 1; k < out.events.length; k++) {
    assert.ok(out.events[k].timestamp >= out.events[k - 1].timestamp, `event ${k} in order`);
  }
  assert.deepEqual(out.finished.result, { text: "k", context: { x: 1 } });
});

Deno.test("a tool that throws is an error result, logged scrubbed with the tool's name", async () => {
  const secret = "sk-test-0123456789abcdefghij";
  const broken: Tool = {
    name: "broken",
    description: "breaks its contract",
    parameters: { type: "object" },
    requires_approval: false,
    call: () => Promise.reject(new Error(`upstream refused key ${secret} (custom-secret-value)`)),
  };
  await using h = await Harness.create({
    turns: [call({ id: "c1", name: "broken" }), say("sorry")],
    tools: [broken],
    secrets: ["custom-secret-value"],
  });
  const out = await h.run({ session_id: "s1", run_id: "r-tool" });
  assert.equal(out.finished.status, "completed");
  const r = only(out.events, "tool_call_result")[0];
  assert.deepEqual([r.is_error, r.content], [true, {
    error: "the tool 'broken' failed unexpectedly",
  }]);
  const line = h.logs.map((l) => JSON.parse(l)).find((l) => l.tool === "broken");
  assert.ok(line, h.logs.join("\n"));
  assert.equal(line.level, "error");
  assert.deepEqual([line.tool_call_id, line.run_id, line.tenant], ["c1", "r-tool", h.tenant]);
  assert.match(line.error, /upstream refused key/);
  assert.ok(!h.logs.join("\n").includes(secret), "a provider key shape is masked");
  assert.ok(!h.logs.join("\n").includes("custom-secret-value"), "configured secrets too");
});
