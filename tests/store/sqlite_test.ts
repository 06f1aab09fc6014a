/** The store contract against SQLite: a file under a temp directory and `:memory:`. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openStore, StoreError } from "../../src/store/mod.ts";
import { storeContract } from "./contract.ts";

const dir = await Deno.makeTempDir({ prefix: "agentd_store_" });
const removeDir = () => Deno.remove(dir, { recursive: true }).catch(() => {});

storeContract(
  "sqlite file",
  () => openStore({ kind: "sqlite", path: join(dir, "a", "b", "agentd.db") }),
);

storeContract("sqlite :memory:", () => openStore({ kind: "sqlite", path: ":memory:" }));

Deno.test("sqlite: the file is in WAL mode and records its migrations once", async () => {
  const path = join(dir, "wal", "agentd.db");
  const store = await openStore({ kind: "sqlite", path });
  await store.migrate();
  await store.close();
  const db = new DatabaseSync(path);
  try {
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    const versions = db.prepare("SELECT version FROM schema_migrations").all();
    assert.deepEqual(versions.map((r) => r.version), [1]);
  } finally {
    db.close();
  }
});

Deno.test("sqlite: two stores on one file see each other's writes", async () => {
  const path = join(dir, "shared", "agentd.db");
  const [a, b] = await Promise.all([
    openStore({ kind: "sqlite", path }),
    openStore({ kind: "sqlite", path }),
  ]);
  try {
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
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("sqlite: processes migrating one fresh file at once all succeed", async () => {
  const path = join(dir, "procs", "agentd.db");
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
  const store = await openStore({ kind: "sqlite", path });
  try {
    assert.equal((await store.listSessions("t", { per_page: 10 })).count, 3);
  } finally {
    await store.close();
  }
  const db = new DatabaseSync(path);
  try {
    assert.equal(db.prepare("SELECT count(*) AS n FROM schema_migrations").get()?.n, 1);
  } finally {
    db.close();
  }
});

Deno.test("sqlite: the store rejects after close", async () => {
  const store = await openStore({ kind: "sqlite", path: ":memory:" });
  await store.close();
  await store.close();
  await assert.rejects(store.getSession("t", "s"));
});

Deno.test("sqlite: remove the temp directory", removeDir);
