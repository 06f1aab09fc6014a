/**
 * The store contract against PostgreSQL (`AGENTD_TEST_POSTGRES_URL`), plus what only a server
 * database shows: NOTIFY between two store instances and concurrent migrations. Each test uses its
 * own schema and drops it at the end.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openStore } from "../../src/store/mod.ts";
import { cancelChannel } from "../../src/store/postgres/mod.ts";
import {
  dropSchema,
  eventually,
  openTestStore,
  skipNotice,
  testPostgresUrl,
  uniqueName,
} from "../_kit/mod.ts";
import { migrations } from "../../src/store/migrations/mod.ts";
import { storeContract } from "./contract/mod.ts";

const url = testPostgresUrl;
const ignore = url === undefined;
if (ignore) skipNotice("PostgreSQL store tests", "AGENTD_TEST_POSTGRES_URL");

/** Runs `body` on a plain connection (for checks and cleanup the store does not offer). */
async function withSql<T>(body: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url!, { max: 1, onnotice: () => {} });
  try {
    return await body(sql);
  } finally {
    await sql.end();
  }
}

storeContract("postgres", (clock) => openTestStore("postgres", { clock }), { ignore });

Deno.test({
  name: "postgres: watchCancellations hears a cancel made through another store instance",
  ignore,
  fn: async () => {
    await using a = await openTestStore("postgres");
    await using b = await openTestStore("postgres", { shared: { schema: a.schema } });
    await using other = await openTestStore("postgres");
    const [replicaA, replicaB, elsewhere] = [a.store, b.store, other.store];

    const heard: string[] = [];
    const unsubscribe = await replicaA.watchCancellations((runId) => heard.push(runId));

    // A cancel in another schema (another deployment) is not heard here.
    await elsewhere.createSession("t", { session_id: "s" });
    await elsewhere.createRun("t", {
      run_id: "r-elsewhere",
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "c",
    });
    await elsewhere.cancelRun("t", "r-elsewhere");

    for (const run_id of ["r-1", "r-2"]) {
      await replicaA.createRun("t", {
        run_id,
        session_id: `s-${run_id}`,
        parent_checkpoint_id: null,
        owner: "a",
        create_session: true,
      });
    }
    await replicaB.cancelRun("t", "r-1");
    await eventually(() => heard.length > 0, { what: "the notification of r-1" });
    // A cancel of a terminal run changes nothing and notifies nobody: r-2's notification,
    // delivered in commit order, arrives with nothing before it.
    await replicaB.cancelRun("t", "r-1");
    await replicaB.cancelRun("t", "r-2");
    await eventually(() => heard.length > 1, { what: "the notification of r-2" });
    assert.deepEqual(heard, ["r-1", "r-2"]);

    await unsubscribe();
    await unsubscribe();
    // A watch still open at close() is ended by it (the sanitizers check nothing leaks).
    await replicaB.watchCancellations(() => {});
  },
});

Deno.test({
  name: "postgres: two stores migrating one fresh schema at once both succeed",
  ignore,
  fn: async () => {
    const schema = uniqueName("agentd_migrate");
    await using stack = new AsyncDisposableStack();
    stack.defer(() => dropSchema(schema));
    const results = await Promise.allSettled(
      [1, 2, 3].map(() => openTestStore("postgres", { shared: { schema } })),
    );
    for (const result of results) {
      if (result.status === "fulfilled") stack.use(result.value);
    }
    for (const result of results) {
      assert.equal(result.status, "fulfilled", String((result as PromiseRejectedResult).reason));
    }
    const versions = await withSql((sql) =>
      sql.unsafe(`SELECT version FROM "${schema}".schema_migrations`)
    );
    assert.deepEqual(versions.map((r) => r.version), migrations.map((m) => m.version));
  },
});

Deno.test({
  name: "postgres: an unreachable database makes openStore reject",
  ignore,
  fn: async () => {
    const unreachable = new URL(url!);
    unreachable.port = "1";
    await assert.rejects(openStore({ kind: "postgres", url: unreachable.href, schema: "x" }));
  },
});

Deno.test({
  name: "postgres: an invalid schema name is refused",
  ignore,
  fn: async () => {
    await assert.rejects(
      openStore({ kind: "postgres", url: url!, schema: 'bad"; DROP' }),
      /invalid PostgreSQL schema name/,
    );
  },
});

Deno.test("postgres: the cancel channel is per schema and a valid identifier", () => {
  assert.equal(cancelChannel("public"), "agentd_cancel_public");
  const long = cancelChannel("s".repeat(63));
  assert.ok(long.length <= 63);
  assert.notEqual(long, cancelChannel("s".repeat(62) + "t"));
});
