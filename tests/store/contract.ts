/**
 * The one contract both stores pass: every `Store` method, its errors, tenant isolation and
 * pagination. `sqlite_test.ts` and `postgres_test.ts` run it against real databases.
 */
import assert from "node:assert/strict";
import type { Message, MessageInput, Run } from "../../src/api/schemas.ts";
import { encodeCursor } from "../../src/store/cursor.ts";
import {
  ConversationChanged,
  type LostRun,
  newMessages,
  type Store,
  StoreError,
} from "../../src/store/mod.ts";
import { assertError, TestClock, type TestStore } from "../_kit/mod.ts";

/** Options of the contract suite. */
export interface ContractOptions {
  /** Registers the test as ignored (its database is not configured). */
  ignore?: boolean;
}

/** A tenant no other step uses, so steps sharing one database stay independent. */
function newTenant(): string {
  return `t_${crypto.randomUUID().slice(0, 8)}`;
}

function newId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}`;
}

/** The store's errors are `StoreError`s, never HTTP errors; the edge answers them with a code. */
const STORE = { thrown: StoreError };

function text(value: string, extra: Partial<MessageInput> = {}): MessageInput {
  return { role: "user", content: [{ type: "text", value }], ...extra };
}

function ms(iso: string): number {
  const value = Date.parse(iso);
  assert.ok(!Number.isNaN(value), `not a timestamp: ${iso}`);
  assert.equal(new Date(value).toISOString(), iso, "timestamps are RFC 3339 (toISOString)");
  return value;
}

const state = (step: number) => ({
  context: { step },
  pending_tool_calls: [],
  step,
});

/**
 * Registers the store contract as one `Deno.test` named after `name`, with a step per area.
 * `open` must return a migrated store on `clock` (the steps move it on where they need a later
 * timestamp); every step uses fresh tenants, so a store that keeps data between runs (one
 * PostgreSQL schema, one SQLite file) is fine.
 */
export function storeContract(
  name: string,
  open: (clock: TestClock) => Promise<TestStore>,
  options: ContractOptions = {},
): void {
  Deno.test({ name: `store contract: ${name}`, ignore: options.ignore }, async (t) => {
    const clock = new TestClock();
    await using fx = await open(clock);
    await contractSteps(t, fx.store, clock);
  });
}

async function contractSteps(t: Deno.TestContext, store: Store, clock: TestClock): Promise<void> {
  /** A session with one running run, for steps that need one. */
  async function runningRun(tenant: string, sessionId = newId("s")): Promise<Run> {
    return await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: sessionId,
      parent_checkpoint_id: null,
      owner: "replica-a",
      create_session: true,
    });
  }

  /**
   * Commits a step of a run: its messages (records made from `inputs`, tagged with the run) and a
   * checkpoint after them. Returns the checkpoint id and the records.
   */
  async function commit(
    tenant: string,
    sessionId: string,
    runId: string,
    options: { inputs?: MessageInput[]; parent?: string | null; step?: number } = {},
  ): Promise<{ checkpoint_id: string; messages: Message[] }> {
    const checkpoint_id = crypto.randomUUID();
    const messages = newMessages(sessionId, options.inputs ?? [], runId, clock.now());
    await store.commitStep({
      tenant_id: tenant,
      session_id: sessionId,
      run_id: runId,
      messages,
      checkpoint: {
        checkpoint_id,
        parent_id: options.parent ?? null,
        state: state(options.step ?? 0),
      },
    });
    return { checkpoint_id, messages };
  }

  await t.step("ping answers", async () => {
    await store.ping();
  });

  await t.step("sessions: create, get, created by a run, 409001, isolation", async () => {
    const tenant = newTenant();
    const other = newTenant();
    const created = await store.createSession(tenant, {
      session_id: "s-1",
      metadata: { topic: "x", n: 1 },
    });
    assert.equal(created.session_id, "s-1");
    assert.deepEqual(created.metadata, { topic: "x", n: 1 });
    assert.equal(created.created_at, created.updated_at);
    ms(created.created_at);
    assert.deepEqual(await store.getSession(tenant, "s-1"), created);
    assert.equal(await store.getSession(other, "s-1"), null);
    assert.equal(await store.getSession(tenant, "nope"), null);

    await assertError(store.createSession(tenant, { session_id: "s-1" }), 409001, STORE);
    // The same id in another tenant is another session.
    const theirs = await store.createSession(other, { session_id: "s-1", metadata: null });
    assert.deepEqual(theirs.metadata, {});

    const generated = await store.createSession(tenant, {});
    assert.match(generated.session_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(generated.metadata, {});

    // A run may create its session, atomically: a refused run leaves no session behind.
    const run = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s-new",
      parent_checkpoint_id: null,
      owner: "o",
      create_session: true,
    });
    const fresh = await store.getSession(tenant, "s-new");
    assert.equal(fresh?.session_id, "s-new");
    assert.deepEqual(fresh?.metadata, {});
    await assertError(
      store.createRun(tenant, {
        run_id: run.run_id,
        session_id: "s-refused",
        parent_checkpoint_id: null,
        owner: "o",
        create_session: true,
      }),
      409002,
      STORE,
    );
    assert.equal(await store.getSession(tenant, "s-refused"), null);
    await assertError(
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s-missing",
        parent_checkpoint_id: null,
        owner: "o",
      }),
      404001,
      STORE,
    );
    // An existing session keeps its metadata and creation time.
    await store.finishRun(run.run_id, { status: "completed" });
    await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s-1",
      parent_checkpoint_id: null,
      owner: "o",
      create_session: true,
    });
    const kept = await store.getSession(tenant, "s-1");
    assert.deepEqual(kept?.metadata, created.metadata);
    assert.equal(kept?.created_at, created.created_at);
  });

  await t.step("sessions: list pages oldest first, count, tenant-scoped", async () => {
    const tenant = newTenant();
    const ids = ["a", "b", "c", "d", "e"];
    for (const id of ids) await store.createSession(tenant, { session_id: id });
    await store.createSession(newTenant(), { session_id: "a" });

    const first = await store.listSessions(tenant, { per_page: 2 });
    assert.deepEqual(first.items.map((s) => s.session_id), ["a", "b"]);
    assert.equal(first.count, 5);
    assert.ok(first.next_page);

    // Rows inserted while paging land after the cursor: nothing repeats or is skipped.
    await store.createSession(tenant, { session_id: "f" });
    const second = await store.listSessions(tenant, { per_page: 2, page: first.next_page });
    assert.deepEqual(second.items.map((s) => s.session_id), ["c", "d"]);
    assert.equal(second.count, 6);
    const third = await store.listSessions(tenant, { per_page: 2, page: second.next_page });
    assert.deepEqual(third.items.map((s) => s.session_id), ["e", "f"]);
    assert.equal(third.next_page, null);

    const all = await store.listSessions(tenant, { per_page: 100, page: null });
    assert.deepEqual(all.items.map((s) => s.session_id), [...ids, "f"]);
    assert.equal(all.next_page, null);
    const exact = await store.listSessions(tenant, { per_page: 6 });
    assert.equal(exact.items.length, 6);
    assert.equal(exact.next_page, null, "no next page when the page ends exactly at the last row");

    const empty = await store.listSessions(newTenant(), { per_page: 10 });
    assert.deepEqual(empty, { items: [], count: 0, next_page: null });
  });

  await t.step("pagination: a cursor that does not decode is 422 on `page`", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    const bad = [
      "!!!",
      "not base64 at all",
      "abc",
      btoa("v2:5").replace(/=+$/, ""),
      btoa("v1:x").replace(/=+$/, ""),
      btoa("v1:-1").replace(/=+$/, ""),
      "",
    ];
    for (const page of bad) {
      const error = await assertError(
        store.listSessions(tenant, { per_page: 10, page }),
        422000,
        STORE,
      );
      assert.equal(error.fields?.[0].field, "page");
      assert.equal(error.fields?.[0].errors[0].code, "cursor");
    }
    await assertError(store.listMessages(tenant, "s", { per_page: 10, page: "%%" }), 422000, STORE);
    await assertError(store.listRuns(tenant, "s", {}, { per_page: 10, page: "%%" }), 422000, STORE);
    await assertError(
      store.listCheckpoints(tenant, "s", { per_page: 10, page: "%%" }),
      422000,
      STORE,
    );
    // A well-formed cursor past the end is simply an empty page.
    const past = await store.listSessions(tenant, { per_page: 10, page: encodeCursor(2 ** 50) });
    assert.deepEqual(past, { items: [], count: 1, next_page: null });
  });

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

  await t.step("runs: createRun writes the input messages with the run, or nothing", async () => {
    const tenant = newTenant();
    const input = newMessages("s", [text("a", { message_id: "a" }), text("b")], "r-1", clock.now());
    const run = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
      create_session: true,
      expect_clock: 0,
      messages: input,
    });
    assert.deepEqual(await store.allMessages(tenant, "s"), input, "records are stored as given");
    await store.finishRun(run.run_id, { status: "completed" });

    // A used id, a busy session, a moved clock: the run, the session and the input stay unwritten.
    const start = await store.readStart(tenant, "s");
    assert.deepEqual(start.messages, input);
    const again = (messages: Message[], expect_clock?: number) =>
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
        expect_clock,
        messages,
      });
    await assertError(
      again(newMessages("s", [text("x", { message_id: "a" })], null, 0)),
      409005,
      STORE,
    );
    await assert.rejects(
      again(newMessages("s", [text("y")], null, 0), start.clock! - 1),
      ConversationChanged,
    );
    const fresh = newTenant();
    await assertError(
      store.createRun(fresh, {
        run_id: newId("r"),
        session_id: "new",
        parent_checkpoint_id: null,
        owner: "o",
        create_session: true,
        messages: newMessages("new", [text("x", { message_id: "x" }), text("x2")], null, 0)
          .map((m, i) => i === 1 ? { ...m, message_id: "x" } : m),
      }),
      409005,
      STORE,
    );
    assert.equal(await store.getSession(fresh, "new"), null, "a refused run creates no session");
    assert.deepEqual((await store.readStart(tenant, "s")).messages, input);
    assert.equal((await store.listRuns(tenant, "s", {}, { per_page: 10 })).count, 1);
  });

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
      (await store.allMessages(tenant, "s")).map((m) => m.content[0].value),
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

  await t.step("runs: finishRun commits the last step with the outcome", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    const messages = newMessages("s", [text("answer")], run.run_id, clock.now());
    const last = {
      tenant_id: tenant,
      session_id: "s",
      run_id: run.run_id,
      messages,
      checkpoint: { checkpoint_id: crypto.randomUUID(), parent_id: null, state: state(1) },
    };
    // A cancel that won the race keeps the status; the last step is written all the same.
    await store.cancelRun(tenant, run.run_id);
    const finished = await store.finishRun(run.run_id, { status: "completed" }, last);
    assert.equal(finished.status, "cancelled");
    assert.equal(finished.checkpoint_id, last.checkpoint.checkpoint_id);
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);

    // A last step that cannot be written (another run holds the session) writes nothing.
    const second = await runningRun(tenant, "s");
    const third = { ...last, messages: newMessages("s", [text("late")], run.run_id, 0) };
    await assertError(
      store.finishRun(run.run_id, { status: "failed" }, {
        ...third,
        checkpoint: { ...third.checkpoint, checkpoint_id: crypto.randomUUID() },
      }),
      409003,
      STORE,
    );
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);
    assert.equal(
      (await store.finishRun(second.run_id, { status: "completed" })).status,
      "completed",
    );
  });

  await t.step("runs: create, get, 404001, one running run per session (409003)", async () => {
    const tenant = newTenant();
    await assertError(
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "missing",
        parent_checkpoint_id: null,
        owner: "o",
      }),
      404001,
      STORE,
    );
    const session = await store.createSession(tenant, { session_id: "s" });
    clock.advance(5);
    const runId = newId("r");
    const run = await store.createRun(tenant, {
      run_id: runId,
      session_id: "s",
      parent_checkpoint_id: "cp-0",
      owner: "replica-a",
    });
    assert.deepEqual(run, {
      run_id: runId,
      session_id: "s",
      tenant_id: tenant,
      status: "running",
      created_at: run.created_at,
      updated_at: run.created_at,
      parent_checkpoint_id: "cp-0",
      checkpoint_id: null,
      result: null,
      interrupt_payload: null,
      error: null,
    });
    assert.ok(!("owner" in run) && !("heartbeat_at" in run), "lease columns stay private");
    assert.deepEqual(await store.getRun(tenant, runId), run);
    assert.equal(await store.getRun(newTenant(), runId), null);
    assert.equal(await store.getRun(tenant, "nope"), null);
    const touched = (await store.getSession(tenant, "s"))!;
    assert.ok(ms(touched.updated_at) > ms(session.updated_at), "run creation bumps updated_at");

    const second = { run_id: newId("r"), session_id: "s", parent_checkpoint_id: null, owner: "o" };
    await assertError(store.createRun(tenant, second), 409003, STORE);
    // Concurrent creations: exactly one wins.
    await store.finishRun(runId, { status: "completed" });
    const racers = await Promise.allSettled(
      [1, 2, 3].map(() =>
        store.createRun(tenant, {
          run_id: newId("r"),
          session_id: "s",
          parent_checkpoint_id: null,
          owner: "o",
        })
      ),
    );
    assert.equal(racers.filter((r) => r.status === "fulfilled").length, 1);
    for (const r of racers) {
      if (r.status === "rejected") await assertError(Promise.reject(r.reason), 409003, STORE);
    }
    // Another session of the tenant is independent.
    await store.createSession(tenant, { session_id: "s2" });
    await store.createRun(tenant, { ...second, session_id: "s2" });
  });

  await t.step("runs: a run id is unique across tenants (409002)", async () => {
    const alice = newTenant();
    const bob = newTenant();
    const run = await runningRun(alice);
    await store.finishRun(run.run_id, { status: "completed" });
    await store.createSession(bob, { session_id: "s" });
    await assertError(
      store.createRun(bob, {
        run_id: run.run_id,
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
      }),
      409002,
      STORE,
    );
    await assertError(
      store.createRun(alice, {
        run_id: run.run_id,
        session_id: run.session_id,
        parent_checkpoint_id: null,
        owner: "o",
      }),
      409002,
      STORE,
    );
    assert.equal(await store.getRun(bob, run.run_id), null);
    assert.equal((await store.listRuns(bob, "s", {}, { per_page: 10 })).count, 0);
  });

  await t.step("runs: listRuns filters, count and pagination", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    await store.createSession(tenant, { session_id: "other" });
    const statuses = ["completed", "failed", "cancelled", "interrupted", "completed"] as const;
    const runs: Run[] = [];
    for (const status of statuses) {
      const run = await store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
      });
      runs.push(await store.finishRun(run.run_id, { status }));
      clock.advance(5);
    }
    const live = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
    });
    runs.push(live);
    await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "other",
      parent_checkpoint_id: null,
      owner: "o",
    });
    const ids = (page: { items: Run[] }) => page.items.map((r) => r.run_id);
    const all = runs.map((r) => r.run_id);
    const list = (filter: Parameters<Store["listRuns"]>[2], perPage = 100) =>
      store.listRuns(tenant, "s", filter, { per_page: perPage });

    const everything = await list({});
    assert.deepEqual(ids(everything), all, "only this session's runs, oldest first");
    assert.equal(everything.count, 6);
    assert.deepEqual(everything.items[0], runs[0]);

    const byId = await list({ ids: [all[1], all[3], "nope"] });
    assert.deepEqual(ids(byId), [all[1], all[3]]);
    assert.equal(byId.count, 2);
    assert.deepEqual(ids(await list({ session_ids: ["s"] })), all);
    assert.deepEqual(ids(await list({ session_ids: ["other"] })), []);
    assert.deepEqual(ids(await list({ statuses: ["completed"] })), [all[0], all[4]]);
    assert.deepEqual(ids(await list({ statuses: ["running", "failed"] })), [all[1], all[5]]);
    assert.deepEqual(ids(await list({ ids: [], statuses: [] })), all, "empty lists filter nothing");

    // Bounds are exclusive: before is `<`, after is `>`.
    const created = ms(runs[2].created_at);
    assert.deepEqual(ids(await list({ created_before: created })), all.slice(0, 2));
    assert.deepEqual(ids(await list({ created_after: created })), all.slice(3));
    assert.deepEqual(
      ids(
        await list({
          created_after: ms(runs[0].created_at),
          created_before: ms(runs[4].created_at),
        }),
      ),
      all.slice(1, 4),
    );
    const updated = ms(runs[2].updated_at);
    assert.deepEqual(ids(await list({ updated_before: updated })), all.slice(0, 2));
    assert.deepEqual(ids(await list({ updated_after: updated })), all.slice(3));
    const combined = await list({ statuses: ["completed"], created_after: created });
    assert.deepEqual(ids(combined), [all[4]]);
    assert.equal(combined.count, 1);

    // A checkpoint moves updated_at, so the live run now sorts after its own creation.
    assert.deepEqual(ids(await list({ updated_after: ms(live.updated_at) })), []);
    clock.advance(5);
    const cp = await commit(tenant, "s", live.run_id);
    const late = await store.getRun(tenant, live.run_id);
    assert.equal(late?.checkpoint_id, cp.checkpoint_id);
    assert.ok(ms(late!.updated_at) > ms(live.updated_at));
    assert.deepEqual(ids(await list({ updated_after: ms(live.updated_at) })), [live.run_id]);

    // Paging through a filter, with runs inserted in between.
    const first = await list({ statuses: ["completed", "failed", "cancelled"] }, 2);
    assert.deepEqual(ids(first), [all[0], all[1]]);
    assert.equal(first.count, 4);
    await store.finishRun(live.run_id, { status: "completed" });
    const extra = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
    });
    await store.finishRun(extra.run_id, { status: "failed" });
    const second = await store.listRuns(tenant, "s", {
      statuses: ["completed", "failed", "cancelled"],
    }, { per_page: 2, page: first.next_page });
    assert.deepEqual(ids(second), [all[2], all[4]]);
    assert.equal(second.count, 6);
    const third = await store.listRuns(tenant, "s", {
      statuses: ["completed", "failed", "cancelled"],
    }, { per_page: 2, page: second.next_page });
    assert.deepEqual(ids(third), [all[5], extra.run_id]);
    assert.equal(third.next_page, null);

    await assertError(store.listRuns(tenant, "missing", {}, { per_page: 10 }), 404001, STORE);
    await assertError(store.listRuns(newTenant(), "s", {}, { per_page: 10 }), 404001, STORE);
  });

  await t.step("run chains: links written with the run, runChain, listChains, paging", async () => {
    const tenant = newTenant();
    const other = newTenant();
    /** A run of `session` finished with `status`, continuing `origin` when given. */
    const run = async (
      session: string,
      status: "completed" | "interrupted" | "cancelled" | null,
      link?: { origin_run_id: string; note?: unknown },
    ) => {
      const created = await store.createRun(tenant, {
        run_id: newId("r"),
        session_id: session,
        parent_checkpoint_id: null,
        owner: "o",
        create_session: true,
        ...(link ? { link } : {}),
      });
      clock.advance(5);
      return status ? await store.finishRun(created.run_id, { status }) : created;
    };
    // Chain A in s1: an origin, then two runs continuing it (the last one completed).
    const a1 = await run("s1", "interrupted");
    const a2 = await run("s1", "interrupted", { origin_run_id: a1.run_id, note: { turn: 2 } });
    const b = await run("s2", "completed");
    const a3 = await run("s1", "completed", { origin_run_id: a1.run_id, note: ["any", "json"] });
    const c = await run("s1", null);

    const chain = await store.runChain(tenant, a1.run_id);
    assert.equal(chain?.origin_run_id, a1.run_id);
    assert.deepEqual(chain?.runs.map((r) => [r.run.run_id, r.note]), [
      [a1.run_id, null],
      [a2.run_id, { turn: 2 }],
      [a3.run_id, ["any", "json"]],
    ]);
    assert.deepEqual(await store.runChain(tenant, a3.run_id), chain, "from any of its runs");
    assert.deepEqual((await store.runChain(tenant, b.run_id))?.runs.map((r) => r.run), [b]);
    assert.equal(await store.runChain(tenant, "nope"), null);
    assert.equal(await store.runChain(other, a1.run_id), null, "another tenant's chain");

    const heads = (page: { items: { origin_run_id: string; run: Run }[] }) =>
      page.items.map((h) => [h.origin_run_id, h.run.run_id]);
    const list = (filter: Parameters<Store["listChains"]>[1], perPage = 50, page?: string | null) =>
      store.listChains(tenant, filter, { per_page: perPage, page });
    // Each chain once, as its latest run, most recently updated first.
    const all = await list({});
    assert.deepEqual(heads(all), [
      [c.run_id, c.run_id],
      [a1.run_id, a3.run_id],
      [b.run_id, b.run_id],
    ]);
    assert.equal(all.count, 3);
    assert.equal(all.next_page, null);
    assert.deepEqual(
      heads(await list({ session_id: "s1" })),
      heads(all).filter(([o]) => o !== b.run_id),
    );
    // Filters apply to the latest run: chain A is completed now, not interrupted.
    assert.deepEqual(heads(await list({ statuses: ["interrupted"] })), []);
    assert.deepEqual(heads(await list({ statuses: ["completed"] })), [
      [a1.run_id, a3.run_id],
      [b.run_id, b.run_id],
    ]);
    assert.deepEqual(heads(await list({ statuses: ["running", "completed"], session_id: "s2" })), [
      [b.run_id, b.run_id],
    ]);
    assert.deepEqual(heads(await list({ updated_since: ms(a3.updated_at) })), [
      [c.run_id, c.run_id],
      [a1.run_id, a3.run_id],
    ], "inclusive");
    assert.equal((await list({ updated_since: ms(c.updated_at) + 1 })).count, 0);
    assert.deepEqual(heads(await store.listChains(other, {}, { per_page: 10 })), []);

    // Pages of one, newest first; a chain that moves while a client pages is not repeated.
    const first = await list({}, 1);
    assert.deepEqual(heads(first), [[c.run_id, c.run_id]]);
    assert.equal(first.count, 3);
    const second = await list({}, 1, first.next_page);
    assert.deepEqual(heads(second), [[a1.run_id, a3.run_id]]);
    const third = await list({}, 1, second.next_page);
    assert.deepEqual(heads(third), [[b.run_id, b.run_id]]);
    assert.equal(third.next_page, null);
    await assertError(list({}, 1, "not-a-cursor"), 422000, STORE);
    await assertError(list({}, 1, encodeCursor(3)), 422000, STORE);

    // A session's links go with it.
    await store.finishRun(c.run_id, { status: "completed" });
    await store.deleteSession(tenant, "s1");
    assert.equal(await store.runChain(tenant, a1.run_id), null);
    assert.deepEqual(heads(await list({})), [[b.run_id, b.run_id]]);
  });

  await t.step("runs: finishRun is a compare-and-set on running", async () => {
    const tenant = newTenant();
    const results: unknown[] = ["plain text", null, 42, [1, "two"], { answer: { deep: true } }];
    for (const result of results) {
      const run = await runningRun(tenant);
      clock.advance(2);
      const done = await store.finishRun(run.run_id, { status: "completed", result });
      assert.equal(done.status, "completed");
      assert.deepEqual(done.result, result);
      assert.ok(ms(done.updated_at) > ms(run.updated_at));
      assert.deepEqual(await store.getRun(tenant, run.run_id), done);
      // Once terminal, a second finish changes nothing and returns the run as it is.
      const again = await store.finishRun(run.run_id, {
        status: "failed",
        error: { code: "x", message: "late" },
      });
      assert.deepEqual(again, done);
    }

    const interrupted = await runningRun(tenant);
    const paused = await store.finishRun(interrupted.run_id, {
      status: "interrupted",
      interrupt_payload: { question: "approve?" },
    });
    assert.deepEqual(paused.interrupt_payload, { question: "approve?" });
    assert.equal(paused.result, null);
    assert.equal(paused.error, null);

    const failing = await runningRun(tenant);
    const failed = await store.finishRun(failing.run_id, {
      status: "failed",
      error: { code: "model_error", message: "boom", provider: "p", model: "m", attempts: 3 },
    });
    assert.deepEqual(failed.error, {
      code: "model_error",
      message: "boom",
      provider: "p",
      model: "m",
      attempts: 3,
    });

    const cancelled = await runningRun(tenant);
    await store.cancelRun(tenant, cancelled.run_id);
    const late = await store.finishRun(cancelled.run_id, { status: "completed", result: "late" });
    assert.equal(late.status, "cancelled");
    assert.equal(late.result, null);

    await assertError(store.finishRun("no-such-run", { status: "completed" }), 404002, STORE);
  });

  await t.step("runs: cancelRun semantics and runStatuses", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    // Another tenant cannot see or cancel it.
    assert.equal(await store.cancelRun(newTenant(), run.run_id), null);
    assert.equal((await store.getRun(tenant, run.run_id))?.status, "running");
    assert.equal(await store.cancelRun(tenant, "no-such-run"), null);

    clock.advance(2);
    const cancelled = await store.cancelRun(tenant, run.run_id);
    assert.equal(cancelled?.status, "cancelled");
    assert.ok(ms(cancelled!.updated_at) > ms(run.updated_at));
    clock.advance(2);
    assert.deepEqual(await store.cancelRun(tenant, run.run_id), cancelled, "terminal: unchanged");

    const done = await runningRun(tenant);
    const completed = await store.finishRun(done.run_id, { status: "completed", result: 1 });
    assert.deepEqual(await store.cancelRun(tenant, done.run_id), completed);

    const live = await runningRun(tenant);
    const statuses = await store.runStatuses([run.run_id, done.run_id, live.run_id, "nope"]);
    assert.deepEqual(
      [...statuses.entries()].sort(),
      [[run.run_id, "cancelled"], [done.run_id, "completed"], [live.run_id, "running"]].sort(),
    );
    assert.equal((await store.runStatuses([])).size, 0);
    // Any tenant: the owner's watch does not know tenants.
    const elsewhere = await runningRun(newTenant());
    assert.equal((await store.runStatuses([elsewhere.run_id])).get(elsewhere.run_id), "running");
    const unsubscribe = await store.watchCancellations(() => {});
    await unsubscribe();
  });

  await t.step("runs: heartbeat and sweepLostRuns", async () => {
    const tenant = newTenant();
    const lease = 60_000;
    const stale = await runningRun(tenant);
    const fresh = await runningRun(tenant);
    const finished = await runningRun(tenant);
    await store.finishRun(finished.run_id, { status: "completed" });
    clock.advance(10);
    await store.heartbeat("replica-b", [fresh.run_id, finished.run_id]);
    await store.heartbeat("replica-b", []);

    const mine = (lost: LostRun[]) => lost.filter((r) => r.tenant_id === tenant);
    // Nothing is older than the lease yet.
    assert.deepEqual(mine(await store.sweepLostRuns(clock.now(), lease)), []);

    // A cutoff between the stale run's creation and the fresh heartbeat.
    const cutoff = ms(stale.created_at) + 5;
    const lost = mine(await store.sweepLostRuns(cutoff + lease, lease));
    assert.deepEqual(lost, [{
      tenant_id: tenant,
      run_id: stale.run_id,
      session_id: stale.session_id,
      owner: "replica-a",
    }]);
    const swept = await store.getRun(tenant, stale.run_id);
    assert.equal(swept?.status, "interrupted");
    assert.deepEqual(swept?.error, {
      code: "replica_lost",
      message: "the replica executing this run stopped heartbeating (owner replica-a)",
    });
    assert.equal((await store.getRun(tenant, fresh.run_id))?.status, "running");
    assert.equal((await store.getRun(tenant, finished.run_id))?.status, "completed");
    // Swept once only.
    assert.deepEqual(mine(await store.sweepLostRuns(cutoff + lease, lease)), []);
    // A swept run is terminal: finishing it later changes nothing.
    assert.equal(
      (await store.finishRun(stale.run_id, { status: "completed" })).status,
      "interrupted",
    );

    // The heartbeat took ownership: the sweep names the new owner.
    const later = mine(await store.sweepLostRuns(clock.now() + lease + 1, lease));
    assert.deepEqual(later.map((r) => [r.run_id, r.owner]), [[fresh.run_id, "replica-b"]]);
  });

  await t.step("runs: two concurrent sweeps report each run once", async () => {
    const tenant = newTenant();
    const runs = await Promise.all([1, 2, 3, 4].map(() => runningRun(tenant)));
    const now = clock.now() + 120_000;
    const [a, b] = await Promise.all([
      store.sweepLostRuns(now, 1000),
      store.sweepLostRuns(now, 1000),
    ]);
    const reported = [...a, ...b].filter((r) => r.tenant_id === tenant).map((r) => r.run_id);
    assert.deepEqual(reported.sort(), runs.map((r) => r.run_id).sort());
    for (const run of runs) {
      assert.equal((await store.getRun(tenant, run.run_id))?.status, "interrupted");
    }
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

  await t.step("tenant isolation across every record", async () => {
    const alice = newTenant();
    const bob = newTenant();
    const run = await runningRun(alice, "shared-name");
    const checkpoint = await commit(alice, "shared-name", run.run_id, {
      inputs: [text("secret", { message_id: "m" })],
    });

    assert.equal(await store.getSession(bob, "shared-name"), null);
    assert.equal(await store.getRun(bob, run.run_id), null);
    assert.equal(await store.cancelRun(bob, run.run_id), null);
    assert.equal(await store.getMessage(bob, "shared-name", "m"), null);
    assert.deepEqual(await store.allMessages(bob, "shared-name"), []);
    assert.equal(await store.getCheckpoint(bob, "shared-name", checkpoint.checkpoint_id), null);
    assert.equal(await store.latestCheckpoint(bob, "shared-name"), null);
    assert.equal((await store.listSessions(bob, { per_page: 10 })).count, 0);
    await assertError(store.deleteSession(bob, "shared-name"), 404001, STORE);
    await assertError(store.listMessages(bob, "shared-name", { per_page: 10 }), 404001, STORE);
    await assertError(store.listCheckpoints(bob, "shared-name", { per_page: 10 }), 404001, STORE);
    await assertError(commit(bob, "shared-name", run.run_id), 404001, STORE);
    assert.deepEqual(await store.readStart(bob, "shared-name"), {
      clock: null,
      checkpoint: null,
      messages: [],
    });

    // Bob's session of the same name is his own, and may run while Alice's runs.
    await store.createSession(bob, { session_id: "shared-name" });
    const bobs = await store.createRun(bob, {
      run_id: newId("r"),
      session_id: "shared-name",
      parent_checkpoint_id: null,
      owner: "o",
    });
    assert.deepEqual(
      (await store.listRuns(bob, "shared-name", {}, { per_page: 10 })).items.map((r) => r.run_id),
      [bobs.run_id],
    );
    assert.equal((await store.listMessages(bob, "shared-name", { per_page: 10 })).count, 0);
    assert.equal(await store.latestCheckpoint(bob, "shared-name"), null);
    assert.equal((await store.getRun(alice, run.run_id))?.status, "running");
  });

  await t.step(
    "sessions: deleteSession cascades; 409003 while running, 404001 absent",
    async () => {
      const tenant = newTenant();
      const run = await runningRun(tenant, "s");
      const checkpoint = await commit(tenant, "s", run.run_id, {
        inputs: [text("x", { message_id: "m" })],
      });
      // Same session id in another tenant must survive.
      const otherTenant = newTenant();
      const theirs = await runningRun(otherTenant, "s");
      await store.finishRun(theirs.run_id, { status: "completed" });

      await assertError(store.deleteSession(tenant, "s"), 409003, STORE);
      assert.ok(await store.getSession(tenant, "s"), "a refused delete removes nothing");
      assert.ok(await store.getMessage(tenant, "s", "m"));

      await store.finishRun(run.run_id, { status: "completed" });
      await store.deleteSession(tenant, "s");
      assert.equal(await store.getSession(tenant, "s"), null);
      assert.equal(await store.getRun(tenant, run.run_id), null);
      assert.equal(await store.getMessage(tenant, "s", "m"), null);
      assert.equal(await store.getCheckpoint(tenant, "s", checkpoint.checkpoint_id), null);
      assert.equal((await store.runStatuses([run.run_id])).size, 0);
      await assertError(store.deleteSession(tenant, "s"), 404001, STORE);
      await assertError(store.deleteSession(tenant, "never"), 404001, STORE);

      // A session re-created under the same id starts empty, and the run id is free again.
      await store.createSession(tenant, { session_id: "s" });
      assert.deepEqual(await store.allMessages(tenant, "s"), []);
      assert.equal(await store.latestCheckpoint(tenant, "s"), null);
      assert.equal((await store.listRuns(tenant, "s", {}, { per_page: 10 })).count, 0);
      await store.createRun(tenant, {
        run_id: run.run_id,
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
      });
      assert.ok(await store.getSession(otherTenant, "s"));
      assert.equal((await store.getRun(otherTenant, theirs.run_id))?.status, "completed");
    },
  );

  await t.step("migrate twice is a no-op", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "kept" });
    await store.migrate();
    await store.migrate();
    assert.ok(await store.getSession(tenant, "kept"));
  });
}
