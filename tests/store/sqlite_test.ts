/**
 * The store contract against SQLite (a file under a temp directory and `:memory:`), and what only a
 * file shows: WAL mode, two stores and several processes on one file, a closed store.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openStore, StoreError } from "../../src/store/mod.ts";
import { openTestStore, tempDir } from "../_kit/mod.ts";
import { migrations } from "../../src/store/migrations/mod.ts";
import { storeContract } from "./contract/mod.ts";

storeContract(
  "sqlite file",
  // Directories of the path that do not exist yet are created.
  (clock) => openTestStore("sqlite", { clock, file: "a/b/agentd.db" }),
);

storeContract("sqlite :memory:", (clock) => openTestStore("sqlite", { clock, memory: true }));

Deno.test("sqlite: the file is in WAL mode and records its migrations once", async () => {
  await using dir = await tempDir();
  const path = dir.join("wal", "agentd.db");
  const store = await openStore({ kind: "sqlite", path });
  await store.migrate();
  await store.close();
  using db = new DatabaseSync(path);
  assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
  const versions = db.prepare("SELECT version FROM schema_migrations").all();
  assert.deepEqual(versions.map((r) => r.version), migrations.map((m) => m.version));
});

Deno.test("sqlite: two stores on one file see each other's writes", async () => {
  await using fa = await openTestStore("sqlite");
  await using fb = await openTestStore("sqlite", { shared: { path: fa.path } });
  const [a, b] = [fa.store, fb.store];
  await a.createSession("t", { session_id: "s" });
  const run = await a.createRun("t", {
    run_id: "r-1",
    session_id: "s",
    parent_checkpoint_id: null,
    owner: "a",
  });
  await assert.rejects(
    b.createRun("t", { run_id: "r-2", session_id: "s", parent_checkpoint_id: null, owner: "b" }),
    (e) => e instanceof StoreError && e.kind === "session_busy",
  );
  assert.equal((await b.cancelRun("t", run.run_id))?.status, "cancelled");
  assert.equal((await a.runStatuses([run.run_id])).get(run.run_id), "cancelled");
  assert.equal((await a.finishRun(run.run_id, { status: "completed" })).status, "cancelled");
});

Deno.test("sqlite: processes migrating one fresh file at once all succeed", async () => {
  await using dir = await tempDir();
  const path = dir.join("procs", "agentd.db");
  const mod = new URL("../../src/store/mod.ts", import.meta.url).href;
  const script = `
    import { openStore } from ${JSON.stringify(mod)};
    const store = await openStore({ kind: "sqlite", path: ${JSON.stringify(path)} });
    await store.createSession("t", {});
    await store.close();
  `;
  const children = [1, 2, 3].map(() =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", script],
      cwd: new URL("../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output()
  );
  for (const output of await Promise.all(children)) {
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  }
  {
    await using fx = await openTestStore("sqlite", { shared: { path } });
    assert.equal((await fx.store.listSessions("t", { per_page: 10 })).count, 3);
  }
  using db = new DatabaseSync(path);
  assert.equal(
    db.prepare("SELECT count(*) AS n FROM schema_migrations").get()?.n,
    migrations.length,
  );
});

Deno.test("sqlite: the store rejects after close", async () => {
  const store = await openStore({ kind: "sqlite", path: ":memory:" });
  await store.close();
  await store.close();
  await assert.rejects(store.getSession("t", "s"));
});
