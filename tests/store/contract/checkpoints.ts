/**
 * Checkpoints: each references the conversation of its moment, a fork restores it, and the reads.
 */
import assert from "node:assert/strict";
import { newMessages } from "../../../src/store/mod.ts";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newId, newTenant, state, STORE, text } from "./helpers.ts";

/** Registers the checkpoints steps of the store contract. */
export async function checkpointSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun, commit } = c;

  await t.step("checkpoints reference the conversation of their moment", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    const one = await commit(tenant, "s", run.run_id, {
      inputs: [text("a", { message_id: "a" }), text("b", { message_id: "b" })],
      step: 1,
    });
    const two = await commit(tenant, "s", run.run_id, {
      inputs: [text("c", { message_id: "c" })],
      parent: one.checkpoint_id,
      step: 2,
    });
    await store.finishRun(run.run_id, { status: "completed" });
    const [a, b] = one.messages;
    const [c] = two.messages;
    // Deleting a message leaves it in the checkpoints that saw it.
    assert.equal(await store.deleteMessage(tenant, "s", "b"), true);
    const [d] = await store.appendMessages(tenant, "s", [text("d", { message_id: "d" })]);
    assert.deepEqual(await store.allMessages(tenant, "s"), [a, c, d]);
    const first = await store.getCheckpoint(tenant, "s", one.checkpoint_id);
    assert.deepEqual(first?.state, { messages: [a, b], ...state(1) });
    assert.equal(first?.step, 1);
    const latest = await store.latestCheckpoint(tenant, "s");
    assert.deepEqual(latest?.state.messages, [a, b, c]);
    const listed = await store.listCheckpoints(tenant, "s", { per_page: 10 });
    assert.deepEqual(listed.items.map((cp) => cp.state.messages), [[a, b], [a, b, c]]);

    // readStart: the latest checkpoint without its conversation, and the current conversation.
    const start = await store.readStart(tenant, "s");
    assert.deepEqual(start.checkpoint, {
      checkpoint_id: two.checkpoint_id,
      run_id: run.run_id,
      parent_id: one.checkpoint_id,
      state: state(2),
    });
    assert.deepEqual(start.messages, [a, c, d]);
    // Named: that checkpoint and its conversation.
    const at = await store.readStart(tenant, "s", one.checkpoint_id);
    assert.equal(at.checkpoint?.checkpoint_id, one.checkpoint_id);
    assert.deepEqual(at.messages, [a, b]);
    assert.equal(at.clock, start.clock);
    assert.deepEqual(await store.readStart(tenant, "s", "nope"), {
      clock: start.clock,
      checkpoint: null,
      messages: [],
    });
    assert.deepEqual(await store.readStart(tenant, "missing"), {
      clock: null,
      checkpoint: null,
      messages: [],
    });
  });

  await t.step("runs: a fork restores the checkpoint's conversation in its order", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    const one = await commit(tenant, "s", run.run_id, {
      inputs: [
        text("a", { message_id: "a" }),
        text("b", { message_id: "b" }),
        text("c", { message_id: "c" }),
      ],
    });
    await store.finishRun(run.run_id, { status: "completed" });
    const [a, b, c] = one.messages;
    await store.deleteMessage(tenant, "s", "b");
    // A new message reuses the id of one the checkpoint had: it leaves with the fork.
    await store.appendMessages(tenant, "s", [text("other c", { message_id: "x" })]);
    await store.deleteMessage(tenant, "s", "c");
    await store.appendMessages(tenant, "s", [text("c again", { message_id: "c" })]);
    assert.deepEqual(
      (await store.allMessages(tenant, "s")).map((m) => (m.content[0] as { value: unknown }).value),
      ["a", "other c", "c again"],
    );

    const input = newMessages("s", [text("e", { message_id: "e" })], "fork-run", clock.now());
    const forked = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: one.checkpoint_id,
      owner: "o",
      fork_checkpoint_id: one.checkpoint_id,
      messages: input,
    });
    assert.deepEqual(await store.allMessages(tenant, "s"), [a, b, c, ...input]);
    assert.deepEqual(
      (await store.listMessages(tenant, "s", { per_page: 2 })).items,
      [a, b],
      "pages follow the restored order",
    );
    assert.equal((await store.listMessages(tenant, "s", { per_page: 2 })).count, 4);
    assert.deepEqual((await store.getCheckpoint(tenant, "s", one.checkpoint_id))?.state.messages, [
      a,
      b,
      c,
    ]);
    await store.finishRun(forked.run_id, { status: "completed" });
    // An unknown checkpoint: 404004 and nothing written.
    await assertError(
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
        fork_checkpoint_id: "nope",
        messages: newMessages("s", [text("z")], null, 0),
      }),
      404004,
      STORE,
    );
    assert.deepEqual(await store.allMessages(tenant, "s"), [a, b, c, ...input]);
  });

  await t.step("checkpoints: add, get, latest, list", async () => {
    const tenant = newTenant();
    await assertError(commit(tenant, "missing", "r-none"), 404001, STORE);
    const run = await runningRun(tenant, "s");
    assert.equal(await store.latestCheckpoint(tenant, "s"), null);
    const saved = [];
    let parent: string | null = null;
    for (const step of [0, 1, 2]) {
      const inputs = step === 1 ? [text("hi", { message_id: "m" })] : [];
      const { checkpoint_id } = await commit(tenant, "s", run.run_id, { inputs, parent, step });
      saved.push((await store.getCheckpoint(tenant, "s", checkpoint_id))!);
      parent = checkpoint_id;
    }
    assert.deepEqual(saved[0].state.messages, []);
    assert.deepEqual(saved[1], {
      checkpoint_id: saved[1].checkpoint_id,
      session_id: "s",
      run_id: run.run_id,
      parent_id: saved[0].checkpoint_id,
      step: 1,
      created_at: saved[1].created_at,
      state: {
        messages: await store.allMessages(tenant, "s"),
        context: { step: 1 },
        pending_tool_calls: [],
        step: 1,
      },
    });
    ms(saved[1].created_at);
    assert.deepEqual(await store.getCheckpoint(tenant, "s", saved[1].checkpoint_id), saved[1]);
    assert.deepEqual(await store.latestCheckpoint(tenant, "s"), saved[2]);
    assert.equal(await store.getCheckpoint(tenant, "other", saved[1].checkpoint_id), null);
    assert.equal(await store.getCheckpoint(tenant, "s", "nope"), null);

    const first = await store.listCheckpoints(tenant, "s", { per_page: 2 });
    assert.deepEqual(first.items, saved.slice(0, 2));
    assert.equal(first.count, 3);
    const second = await store.listCheckpoints(tenant, "s", { per_page: 2, page: first.next_page });
    assert.deepEqual(second.items, saved.slice(2));
    assert.equal(second.next_page, null);
    await assertError(store.listCheckpoints(tenant, "missing", { per_page: 2 }), 404001, STORE);

    // A checkpoint of a run becomes the run's checkpoint pointer.
    assert.equal((await store.getRun(tenant, run.run_id))?.checkpoint_id, saved[2].checkpoint_id);
  });
}
