/**
 * Messages: a session's conversation appended to, listed, read and deleted, and the checks that
 * guard it.
 */
import assert from "node:assert/strict";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newId, newTenant, STORE, text } from "./helpers.ts";

/** Registers the messages steps of the store contract. */
export async function messageSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun, commit } = c;

  await t.step("messages: append generates ids, keeps order and optional fields", async () => {
    const tenant = newTenant();
    const session = await store.createSession(tenant, { session_id: "s" });
    clock.advance(5);
    const appended = await store.appendMessages(tenant, "s", [
      text("hello", { message_id: "m-1" }),
      {
        role: "assistant",
        content: [{ type: "text", value: "calling" }],
        tool_calls: [{ id: "call-1", name: "search", arguments: { q: "x" } }],
      },
      {
        role: "tool",
        content: [{ type: "data", value: { hits: [1, 2] } }],
        tool_call_id: "call-1",
      },
    ]);
    assert.equal(appended.length, 3);
    assert.equal(appended[0].message_id, "m-1");
    assert.match(appended[1].message_id, /^[0-9a-f-]{36}$/);
    assert.ok(appended.every((m) => m.session_id === "s" && m.run_id === null));
    assert.ok(!("tool_calls" in appended[0]) && !("tool_call_id" in appended[0]));
    assert.deepEqual(appended[1].tool_calls, [{
      id: "call-1",
      name: "search",
      arguments: { q: "x" },
    }]);
    assert.ok(!("tool_call_id" in appended[1]));
    assert.equal(appended[2].tool_call_id, "call-1");
    assert.ok(!("tool_calls" in appended[2]));

    const all = await store.allMessages(tenant, "s");
    assert.deepEqual(all, appended, "stored records equal the returned ones");
    assert.deepEqual(await store.getMessage(tenant, "s", "m-1"), appended[0]);
    assert.equal(await store.getMessage(tenant, "s", "nope"), null);

    const touched = (await store.getSession(tenant, "s"))!;
    assert.ok(ms(touched.updated_at) > ms(session.updated_at), "append bumps updated_at");
    assert.equal(touched.created_at, session.created_at);

    const more = await store.appendMessages(tenant, "s", [text("again")]);
    assert.equal(more[0].run_id, null);
    assert.deepEqual(
      (await store.allMessages(tenant, "s")).map((m) => m.message_id),
      [...appended, ...more].map((m) => m.message_id),
    );
  });

  await t.step("messages: 409005 on a used id (atomic), 404001 without session", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    await store.createSession(tenant, { session_id: "s2" });
    await store.appendMessages(tenant, "s", [text("one", { message_id: "m-1" })]);

    await assertError(
      store.appendMessages(tenant, "s", [
        text("x", { message_id: "m-2" }),
        text("y", { message_id: "m-1" }),
      ]),
      409005,
      STORE,
    );
    await assertError(
      store.appendMessages(tenant, "s", [
        text("x", { message_id: "m-3" }),
        text("y", { message_id: "m-3" }),
      ]),
      409005,
      STORE,
    );
    assert.deepEqual(
      (await store.allMessages(tenant, "s")).map((m) => m.message_id),
      ["m-1"],
      "a rejected batch inserts nothing",
    );
    // Message ids are unique per session only.
    await store.appendMessages(tenant, "s2", [text("same id", { message_id: "m-1" })]);

    await assertError(store.appendMessages(tenant, "missing", [text("x")]), 404001, STORE);
    await assertError(store.appendMessages(newTenant(), "s", [text("x")]), 404001, STORE);
  });

  await t.step("messages: list pages, get and delete, tenant isolation", async () => {
    const tenant = newTenant();
    const other = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    await store.createSession(other, { session_id: "s" });
    const ids = ["m1", "m2", "m3", "m4", "m5"];
    await store.appendMessages(tenant, "s", ids.map((id) => text(id, { message_id: id })));
    await store.appendMessages(other, "s", [text("theirs", { message_id: "m1" })]);

    const first = await store.listMessages(tenant, "s", { per_page: 3 });
    assert.deepEqual(first.items.map((m) => m.message_id), ["m1", "m2", "m3"]);
    assert.equal(first.count, 5);
    await store.appendMessages(tenant, "s", [text("m6", { message_id: "m6" })]);
    const second = await store.listMessages(tenant, "s", { per_page: 3, page: first.next_page });
    assert.deepEqual(second.items.map((m) => m.message_id), ["m4", "m5", "m6"]);
    assert.equal(second.count, 6);
    assert.equal(second.next_page, null);

    assert.equal((await store.getMessage(other, "s", "m1"))?.content[0].type, "text");
    assert.deepEqual((await store.getMessage(other, "s", "m1"))?.content, [
      { type: "text", value: "theirs" },
    ]);
    assert.equal(await store.getMessage(other, "s", "m2"), null);

    const before = (await store.getSession(tenant, "s"))!;
    clock.advance(5);
    assert.equal(await store.deleteMessage(tenant, "s", "m2"), true);
    assert.equal(await store.deleteMessage(tenant, "s", "m2"), false);
    assert.equal(await store.deleteMessage(other, "s", "m3"), false);
    assert.equal(await store.getMessage(tenant, "s", "m2"), null);
    const after = (await store.getSession(tenant, "s"))!;
    assert.ok(ms(after.updated_at) > ms(before.updated_at), "delete bumps updated_at");
    assert.deepEqual(
      (await store.allMessages(tenant, "s")).map((m) => m.message_id),
      ["m1", "m3", "m4", "m5", "m6"],
    );
    assert.equal((await store.listMessages(tenant, "s", { per_page: 10 })).count, 5);
    assert.equal((await store.allMessages(other, "s")).length, 1);

    await assertError(store.listMessages(tenant, "missing", { per_page: 10 }), 404001, STORE);
    await assertError(store.deleteMessage(tenant, "missing", "m1"), 404001, STORE);
    assert.deepEqual(await store.allMessages(tenant, "missing"), []);
  });

  await t.step("messages: 409003 while another run is running, checked in the write", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    // The running run itself may write its conversation.
    await commit(tenant, "s", run.run_id, { inputs: [text("own", { message_id: "own" })] });
    await assertError(
      store.appendMessages(tenant, "s", [text("x", { message_id: "x" })]),
      409003,
      STORE,
    );
    await assertError(commit(tenant, "s", "another-run", { inputs: [text("y")] }), 409003, STORE);
    await assertError(store.deleteMessage(tenant, "s", "own"), 409003, STORE);
    assert.deepEqual((await store.allMessages(tenant, "s")).map((m) => m.message_id), ["own"]);
    // An absent session is still 404001.
    await assertError(store.appendMessages(tenant, "missing", [text("z")]), 404001, STORE);

    await store.finishRun(run.run_id, { status: "completed" });
    await store.appendMessages(tenant, "s", [text("x", { message_id: "x" })]);
    assert.equal(await store.deleteMessage(tenant, "s", "own"), true);
    assert.deepEqual((await store.allMessages(tenant, "s")).map((m) => m.message_id), ["x"]);
  });

  await t.step("messages: a long conversation appends and forks back in order", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    const inputs = Array.from({ length: 1200 }, (_, i) => text(`m${i}`, { message_id: `m${i}` }));
    const { checkpoint_id, messages } = await commit(tenant, "s", run.run_id, { inputs });
    await store.finishRun(run.run_id, { status: "completed" });
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);
    for (const id of ["m0", "m600", "m1199"]) await store.deleteMessage(tenant, "s", id);
    assert.equal((await store.listMessages(tenant, "s", { per_page: 1 })).count, 1197);
    await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: checkpoint_id,
      owner: "o",
      fork_checkpoint_id: checkpoint_id,
    });
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);
  });
}
