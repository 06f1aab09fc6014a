/**
 * Sessions: create, get, list and delete (with everything a session holds), and a run that creates
 * its session.
 */
import assert from "node:assert/strict";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newId, newTenant, STORE, text } from "./helpers.ts";

/** Registers the sessions steps of the store contract. */
export async function sessionSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, runningRun, commit } = c;

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
}
