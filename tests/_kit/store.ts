/**
 * A store for a test, opened and migrated: SQLite in a temp directory, or PostgreSQL in a schema
 * of its own. Declare it with `await using`; it is closed and its file or schema removed when the
 * scope ends.
 */
import { join } from "node:path";
import { openStore, type Store } from "../../src/store/mod.ts";
import { TestClock } from "./clock.ts";
import { dropSchema, testPostgresUrl, uniqueName } from "./services.ts";
import type { StoreKind } from "./server.ts";

/** A test's store and the clock its records carry. */
export interface TestStore extends AsyncDisposable {
  store: Store;
  /** `clock.advance()` instead of sleeping for a new millisecond. */
  clock: TestClock;
  /** SQLite: the database file. */
  path?: string;
  /** PostgreSQL: the schema. */
  schema?: string;
}

/** Options of `openTestStore`. */
export interface TestStoreOptions {
  /** `:memory:` instead of a file (SQLite only). */
  memory?: boolean;
  /** A clock shared with other stores; a new one by default. */
  clock?: TestClock;
}

/** Opens a fresh store of `kind` for a test. */
export async function openTestStore(
  kind: StoreKind = "sqlite",
  options: TestStoreOptions = {},
): Promise<TestStore> {
  const clock = options.clock ?? new TestClock();
  if (kind === "postgres") {
    if (!testPostgresUrl) throw new Error("AGENTD_TEST_POSTGRES_URL is not set");
    const schema = uniqueName("agentd_test");
    const store = await openStore({ kind, url: testPostgresUrl, schema, clock });
    return {
      store,
      clock,
      schema,
      async [Symbol.asyncDispose]() {
        await store.close();
        await dropSchema(schema);
      },
    };
  }
  if (options.memory) {
    const store = await openStore({ kind, path: ":memory:", clock });
    return { store, clock, [Symbol.asyncDispose]: () => store.close() };
  }
  const dir = await Deno.makeTempDir({ prefix: "agentd_store_" });
  const path = join(dir, "agentd.db");
  const store = await openStore({ kind, path, clock }).catch(async (error) => {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  });
  return {
    store,
    clock,
    path,
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
