/**
 * The store contract against PostgreSQL (`AGENTD_TEST_POSTGRES_URL`), plus what only a server
 * database shows: NOTIFY between two store instances and concurrent migrations. Each test uses its
 * own schema and drops it at the end.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openStore, type Store } from "../../src/store/mod.ts";
import { cancelChannel } from "../../src/store/postgres/mod.ts";
import { skipNotice, testPostgresUrl, uniqueName } from "../helpers/services.ts";
import { storeContract } from "./contract.ts";

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

function dropSchema(schema: string): Promise<void> {
  return withSql(async (sql) => {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
}

function open(schema: string): Promise<Store> {
  return openStore({ kind: "postgres", url: url!, schema });
}

const contractSchema = uniqueName("agentd_store");
storeContract("postgres", () => open(contractSchema), {
  ignore,
  teardown: () => dropSchema(contractSchema),
});

Deno.test({
  name: "postgres: watchCancellations hears a cancel made through another store instance",
  ignore,
  fn: async () => {
    const schema = uniqueName("agentd_watch");
    const otherSchema = uniqueName("agentd_watch_other");
    const stores: Store[] = [];
    try {
      const replicaA = await open(schema);
      stores.push(replicaA);
      const replicaB = await open(schema);
      stores.push(replicaB);
      const elsewhere = await open(otherSchema);
      stores.push(elsewhere);

      const heard: string[] = [];
      let wake = () => {};
      const unsubscribe = await replicaA.watchCancellations((runId) => {
        heard.push(runId);
        wake();
      });

      // A cancel in another schema (another deployment) is not heard here.
      await elsewhere.createSession("t", { session_id: "s" });
      await elsewhere.createRun("t", {
        run_id: "r-elsewhere",
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "c",
      });
      await elsewhere.cancelRun("t", "r-elsewhere");

      await replicaA.createSession("t", { session_id: "s" });
      await replicaA.createRun("t", {
        run_id: "r-1",
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "a",
      });
      const arrived = new Promise<void>((resolve) => wake = resolve);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no notification within 5 s")), 5000);
      });
      try {
        await replicaB.cancelRun("t", "r-1");
        await Promise.race([arrived, timeout]);
      } finally {
        clearTimeout(timer);
      }
      // A cancel of a terminal run changes nothing and notifies nobody.
      await replicaB.cancelRun("t", "r-1");
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(heard, ["r-1"]);

      await unsubscribe();
      await unsubscribe();
      // A watch still open at close() is ended by it (the sanitizers check nothing leaks).
      await replicaB.watchCancellations(() => {});
    } finally {
      for (const store of stores) await store.close();
      await dropSchema(schema);
      await dropSchema(otherSchema);
    }
  },
});

Deno.test({
  name: "postgres: two stores migrating one fresh schema at once both succeed",
  ignore,
  fn: async () => {
    const schema = uniqueName("agentd_migrate");
    const results = await Promise.allSettled([open(schema), open(schema), open(schema)]);
    try {
      for (const result of results) {
        assert.equal(result.status, "fulfilled", String((result as PromiseRejectedResult).reason));
      }
      const versions = await withSql((sql) =>
        sql.unsafe(`SELECT version FROM "${schema}".schema_migrations`)
      );
      assert.deepEqual(versions.map((r) => r.version), [1]);
    } finally {
      for (const result of results) {
        if (result.status === "fulfilled") await result.value.close();
      }
      await dropSchema(schema);
    }
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
