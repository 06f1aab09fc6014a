/**
 * A run's writes at step boundaries (engine/step_writer.ts) on a real SQLite store: messages wait
 * in memory until their step ends, a step's messages and checkpoint are written together and the
 * checkpoints chain, the last step is kept back for the outcome, and a failed step's messages
 * become the last step without a checkpoint.
 */
import assert from "node:assert/strict";
import { StepWriter } from "../../src/engine/step_writer.ts";
import { openTestStore } from "../_kit/mod.ts";

const ids = { tenant_id: "t1", session_id: "s1", run_id: "r1" };
const text = (value: string) => ({
  role: "assistant" as const,
  content: [{ type: "text" as const, value }],
});

async function setup() {
  const fx = await openTestStore("sqlite", { memory: true });
  await fx.store.createRun("t1", {
    run_id: "r1",
    session_id: "s1",
    parent_checkpoint_id: null,
    owner: "test",
    create_session: true,
  });
  return fx;
}

Deno.test("step writer: a step's messages and checkpoint together; checkpoints chain", async () => {
  await using fx = await setup();
  const writes = new StepWriter(fx, ids, null, []);
  const [a] = writes.add([text("a")]);
  assert.equal(a.run_id, "r1");
  assert.equal(writes.dirty, true);
  assert.deepEqual(await fx.store.allMessages("t1", "s1"), [], "nothing written mid-step");

  await writes.checkpoint({ context: { n: 1 }, step: 1 }, [], false);
  assert.equal(writes.dirty, false);
  const first = await fx.store.latestCheckpoint("t1", "s1");
  const { context, pending_tool_calls, step } = first!.state;
  assert.deepEqual({ context, pending_tool_calls, step }, {
    context: { n: 1 },
    pending_tool_calls: [],
    step: 1,
  });
  assert.equal(first?.parent_id, null);
  assert.deepEqual((await fx.store.allMessages("t1", "s1")).map((m) => m.message_id), [
    a.message_id,
  ]);

  writes.add([text("b")]);
  await writes.checkpoint({ context: { n: 2 }, step: 2 }, [], false);
  const second = await fx.store.latestCheckpoint("t1", "s1");
  assert.equal(second?.parent_id, first?.checkpoint_id, "chained to the previous one");
  assert.deepEqual(writes.conversation.map((m) => (m.content[0] as { value: unknown }).value), [
    "a",
    "b",
  ]);
});

Deno.test("step writer: the last step is kept back, handed over once", async () => {
  await using fx = await setup();
  const writes = new StepWriter(fx, ids, null, []);
  writes.add([text("final")]);
  await writes.checkpoint({ context: null, step: 1 }, [], true);
  assert.equal(await fx.store.latestCheckpoint("t1", "s1"), null, "not written");
  const last = writes.takeLast();
  assert.deepEqual(last?.messages.map((m) => (m.content[0] as { value: unknown }).value), [
    "final",
  ]);
  assert.ok(last?.checkpoint);
  assert.equal(writes.takeLast(), null);
});

Deno.test("step writer: a failed step's messages become the last step, no checkpoint", async () => {
  await using fx = await setup();
  const writes = new StepWriter(fx, ids, null, []);
  writes.keepUnsavedAsLast();
  assert.equal(writes.takeLast(), null, "nothing unsaved: no last step");
  writes.add([text("half")]);
  writes.keepUnsavedAsLast();
  const last = writes.takeLast();
  assert.equal(last?.checkpoint, null);
  assert.deepEqual(last?.messages.map((m) => (m.content[0] as { value: unknown }).value), ["half"]);
});
