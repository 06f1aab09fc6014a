/**
 * The SQLite checkpoint worker (src/store/sqlite/checkpointer.ts): it folds the WAL into the
 * database file while the store runs, off the thread that serves requests.
 */
import assert from "node:assert/strict";
import { openStore } from "../../../src/store/mod.ts";
import { eventually, openTestStore, tempDir } from "../../_kit/mod.ts";
import type { Store } from "../../../src/store/mod.ts";

/** Appends 50 messages of 4 KB: ~200 KB in the WAL, below SQLite's own checkpoint mark. */
async function fillWal(store: Store): Promise<void> {
  await store.createSession("t", { session_id: "s" });
  const long = "x".repeat(4000);
  for (let i = 0; i < 50; i++) {
    await store.appendMessages("t", "s", [{
      role: "user",
      content: [{ type: "text", value: `${i} ${long}` }],
    }]);
  }
}

Deno.test("sqlite: the WAL is folded into the database file while the store runs", async () => {
  await using fx = await openTestStore("sqlite");
  const before = (await Deno.stat(fx.path!)).size;
  await fillWal(fx.store);
  // Checkpoints (a worker's, off the request thread) copy the pages into the file itself.
  await eventually(async () => (await Deno.stat(fx.path!)).size > before + 100_000, {
    what: "the database file to grow by what the WAL held",
  });
});

Deno.test("sqlite: with a background promise the worker starts after it resolves", async () => {
  await using dir = await tempDir("agentd_store_");
  const path = dir.join("agentd.db");
  const background = Promise.withResolvers<void>();
  const store = await openStore({ kind: "sqlite", path, background: background.promise });
  try {
    const before = (await Deno.stat(path)).size;
    await fillWal(store);
    // No worker yet, and the WAL is below SQLite's own mark: the file itself has not grown.
    assert.equal((await Deno.stat(path)).size, before);
    background.resolve();
    await eventually(async () => (await Deno.stat(path)).size > before + 100_000, {
      what: "the database file to grow by what the WAL held",
    });
  } finally {
    await store.close();
  }
});

Deno.test("sqlite: a store closed before its background promise resolves leaves nothing running", async () => {
  await using dir = await tempDir("agentd_store_");
  const path = dir.join("agentd.db");
  const background = Promise.withResolvers<void>();
  const store = await openStore({ kind: "sqlite", path, background: background.promise });
  await store.close();
  background.resolve();
  // A start asked for after close() finds the store closed and starts no worker.
  await new Promise((resolve) => setTimeout(resolve, 50));
});

Deno.test("sqlite: a store closed while its worker's start waits leaves nothing running", async () => {
  await using dir = await tempDir("agentd_store_");
  const path = dir.join("agentd.db");
  const background = Promise.withResolvers<void>();
  const store = await openStore({ kind: "sqlite", path, background: background.promise });
  background.resolve();
  await background.promise;
  // The start's timer is pending now: close() clears it, and a late start would find it closed.
  await store.close();
});
