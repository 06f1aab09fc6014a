/**
 * A store for a test, opened and migrated: SQLite in a temp directory, or PostgreSQL in a schema
 * of its own. Declare it with `await using`; it is closed and its file or schema removed when the
 * scope ends. `shared` opens another store on an existing file or schema (another replica), which
 * is only closed.
 */
import { openStore, type Store } from "../../src/store/mod.ts";
import { TestClock } from "./clock.ts";
import { dropSchema, testPostgresUrl, uniqueName } from "./services.ts";
import type { StoreKind } from "./server.ts";
import { tempDir } from "./temp.ts";

/** A test's store and the clock its records carry. */
export interface TestStore extends AsyncDisposable {
  store: Store;
  /** `clock.advance()` instead of sleeping for a new millisecond. */
  clock: TestClock;
  /** SQLite: the database file (absent for `:memory:`). */
  path?: string;
  /** PostgreSQL: the schema. */
  schema?: string;
}

/** Options of `openTestStore`. */
export interface TestStoreOptions {
  /** `:memory:` instead of a file (SQLite only). */
  memory?: boolean;
  /** The file's path inside the temp directory (SQLite; default `agentd.db`). */
  file?: string;
  /** Open this existing SQLite file or PostgreSQL schema; disposing only closes the store. */
  shared?: { path?: string; schema?: string };
  /** A clock shared with other stores; a new one by default. */
  clock?: TestClock;
}

/** Opens a fresh store of `kind` for a test (or one more on a shared file or schema). */
export async function openTestStore(
  kind: StoreKind = "sqlite",
  options: TestStoreOptions = {},
): Promise<TestStore> {
  const clock = options.clock ?? new TestClock();
  if (kind === "postgres") {
    if (!testPostgresUrl) throw new Error("AGENTD_TEST_POSTGRES_URL is not set");
    const schema = options.shared?.schema ?? uniqueName("agentd_test");
    const store = await openStore({ kind, url: testPostgresUrl, schema, clock });
    return {
      store,
      clock,
      schema,
      async [Symbol.asyncDispose]() {
        await store.close();
        if (!options.shared) await dropSchema(schema);
      },
    };
  }
  if (options.memory || options.shared?.path) {
    const path = options.shared?.path ?? ":memory:";
    const store = await openStore({ kind, path, clock });
    return { store, clock, path: options.shared?.path, [Symbol.asyncDispose]: () => store.close() };
  }
  const dir = await tempDir("agentd_store_");
  const path = dir.join(options.file ?? "agentd.db");
  const store = await openStore({ kind, path, clock }).catch(async (error) => {
    await dir[Symbol.asyncDispose]();
    throw error;
  });
  return {
    store,
    clock,
    path,
    async [Symbol.asyncDispose]() {
      await store.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}
