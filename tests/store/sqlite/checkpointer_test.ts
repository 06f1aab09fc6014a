/**
 * The SQLite checkpoint worker (src/store/sqlite/checkpointer.ts): it folds the WAL into the
 * database file while the store runs, off the thread that serves requests.
 */
import { eventually, openTestStore } from "../../_kit/mod.ts";

Deno.test("sqlite: the WAL is folded into the database file while the store runs", async () => {
  await using fx = await openTestStore("sqlite");
  const before = (await Deno.stat(fx.path!)).size;
  await fx.store.createSession("t", { session_id: "s" });
  const long = "x".repeat(4000);
  for (let i = 0; i < 50; i++) {
    await fx.store.appendMessages("t", "s", [{
      role: "user",
      content: [{ type: "text", value: `${i} ${long}` }],
    }]);
  }
  // Checkpoints (a worker's, off the request thread) copy the pages into the file itself.
  await eventually(async () => (await Deno.stat(fx.path!)).size > before + 100_000, {
    what: "the database file to grow by what the WAL held",
  });
});
