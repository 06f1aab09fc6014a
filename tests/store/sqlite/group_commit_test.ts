/**
 * The SQLite group commit (src/store/sqlite/group_commit.ts): the writes of one turn of the event
 * loop share one transaction, and a write that fails is undone alone.
 */
import assert from "node:assert/strict";
import { StoreError } from "../../../src/store/mod.ts";
import { openTestStore } from "../../_kit/mod.ts";

Deno.test("sqlite: a write that fails inside a group commit is undone alone", async () => {
  await using fa = await openTestStore("sqlite");
  const store = fa.store;
  const start = (run_id: string, session_id: string) =>
    store.createRun("t", {
      run_id,
      session_id,
      parent_checkpoint_id: null,
      owner: "a",
      create_session: true,
      expect_clock: 0,
    });
  await start("taken", "s0");
  // One turn of the event loop, so one transaction: the first write (which opens it, without a
  // savepoint of its own) fails after it created its session, a later one fails the same way,
  // and each write beside them commits.
  const results = await Promise.allSettled([
    start("taken", "s1"),
    start("r2", "s2"),
    start("taken", "s3"),
    start("r4", "s4"),
  ]);
  assert.deepEqual(results.map((r) => r.status), [
    "rejected",
    "fulfilled",
    "rejected",
    "fulfilled",
  ]);
  for (const r of [results[0], results[2]]) {
    const reason = (r as PromiseRejectedResult).reason;
    assert.ok(reason instanceof StoreError && reason.kind === "run_exists", String(reason));
  }
  // What was committed, as another connection reads the file.
  await using fb = await openTestStore("sqlite", { shared: { path: fa.path } });
  const sessions = await fb.store.listSessions("t", { per_page: 10 });
  assert.deepEqual(sessions.items.map((s) => s.session_id), ["s0", "s2", "s4"]);
  assert.equal((await fb.store.getRun("t", "r4"))?.status, "running");
  // A write after a failed first one, in a turn of its own, works as usual.
  await start("r5", "s5");
  assert.equal((await fb.store.getRun("t", "r5"))?.session_id, "s5");
});
