/**
 * Migration 2 on data written by migration 1: checkpoints that copied their conversation keep
 * exactly that conversation (including messages a fork or a delete removed from the table since),
 * the current conversation is unchanged, and a fork back to an old checkpoint restores it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import postgres from "postgres";
import type { Message } from "../../src/api/schemas.ts";
import { initial } from "../../src/store/migrations/0001_initial.ts";
import { SCHEMA_MIGRATIONS_DDL } from "../../src/store/migrations/mod.ts";
import { openStore, type Store } from "../../src/store/mod.ts";
import { dropSchema, storeKinds, testPostgresUrl, uniqueName } from "../_kit/mod.ts";

/** Runs statements with `?` placeholders on a raw version-1 database. */
type Exec = (sql: string, params?: unknown[]) => Promise<void>;

const T0 = Date.parse("2026-01-02T03:04:05.000Z");

/** A stored message as version 1 wrote it, and the record a checkpoint copied of it. */
function message(
  session: string,
  id: string,
  at: number,
  extra: Partial<Message> = {},
): Message {
  return {
    message_id: id,
    session_id: session,
    run_id: "r-old",
    role: "user",
    content: [{ type: "text", value: `text of ${id}` }],
    created_at: new Date(T0 + at).toISOString(),
    ...extra,
  };
}

async function insertMessage(exec: Exec, json: string, m: Message): Promise<void> {
  await exec(
    `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
     tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ${json}, ${json}, ?, ?)`,
    [
      "t",
      m.session_id,
      m.message_id,
      m.run_id,
      m.role,
      JSON.stringify(m.content),
      m.tool_calls ? JSON.stringify(m.tool_calls) : null,
      m.tool_call_id ?? null,
      Date.parse(m.created_at),
    ],
  );
}

/** The version-1 data: what every checkpoint must still say after the migration. */
async function seed(exec: Exec, json: string) {
  const call = { id: "call-1", name: "lookup", arguments: { q: "x" } };
  // s1: an ordinary session; its checkpoints copied prefixes of the table.
  const s1 = [
    message("s1", "m1", 1),
    message("s1", "m2", 2, { role: "assistant", content: [], tool_calls: [call] }),
    message("s1", "m3", 3, {
      role: "tool",
      content: [{ type: "data", value: { hits: [1] } }],
      tool_call_id: "call-1",
    }),
    message("s1", "m4", 4, { role: "assistant", content: [{ type: "text", value: "done" }] }),
  ];
  // s2: forked once: `b` was replaced away (not in the table any more), `x` came after the fork.
  const a = message("s2", "a", 1);
  const b = message("s2", "b", 2, { role: "assistant" });
  const x = message("s2", "x", 3);
  for (const m of [...s1, a, x]) await insertMessage(exec, json, m);
  const pending = [{ tool_call_id: "call-1", tool_name: "lookup", arguments: {}, kind: "client" }];
  const checkpoints = [
    { id: "cp1", session: "s1", step: 1, messages: s1.slice(0, 2), context: null, pending },
    { id: "cp2", session: "s1", step: 2, messages: s1, context: { n: 2 }, pending: [] },
    { id: "cp0", session: "s1", step: 0, messages: [], context: null, pending: [] },
    { id: "cpA", session: "s2", step: 1, messages: [a, b], context: { n: 1 }, pending: [] },
    { id: "cpB", session: "s2", step: 2, messages: [a, x], context: null, pending: [] },
  ];
  for (const [i, cp] of checkpoints.entries()) {
    await exec(
      `INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id, run_id, parent_id, step,
       state, created_at) VALUES (?, 't', ?, 'r-old', NULL, ?, ${json}, ?)`,
      [
        cp.id,
        cp.session,
        cp.step,
        JSON.stringify({
          messages: cp.messages,
          context: cp.context,
          pending_tool_calls: cp.pending,
          step: cp.step,
        }),
        T0 + 10 + i,
      ],
    );
  }
  for (const session of ["s1", "s2"]) {
    await exec(
      `INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
       VALUES ('t', ?, ${json}, ?, ?)`,
      [session, "{}", T0, T0],
    );
  }
  return { checkpoints, current: { s1, s2: [a, x] }, forked: [a, b] };
}

/** Creates a version-1 database, seeds it, and opens it with the store (which migrates it). */
async function migrateVersionOne(kind: "sqlite" | "postgres") {
  if (kind === "sqlite") {
    const dir = await Deno.makeTempDir({ prefix: "agentd_migration_" });
    const path = join(dir, "agentd.db");
    const db = new DatabaseSync(path);
    db.exec(SCHEMA_MIGRATIONS_DDL);
    for (const statement of initial.sqlite) db.exec(statement);
    db.prepare("INSERT INTO schema_migrations VALUES (1, 'initial', 0)").run();
    const seeded = await seed((sql, params = []) => {
      db.prepare(sql).run(...params as SQLInputValue[]);
      return Promise.resolve();
    }, "?");
    db.close();
    const store = await openStore({ kind, path });
    return {
      store,
      seeded,
      async [Symbol.asyncDispose]() {
        await store.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  }
  const schema = uniqueName("agentd_migration");
  const sql = postgres(testPostgresUrl!, {
    max: 1,
    onnotice: () => {},
    connection: { search_path: schema },
  });
  let seeded;
  try {
    await sql.unsafe(`CREATE SCHEMA "${schema}"`);
    await sql.unsafe(SCHEMA_MIGRATIONS_DDL);
    for (const statement of initial.postgres) await sql.unsafe(statement);
    await sql.unsafe("INSERT INTO schema_migrations VALUES (1, 'initial', 0)");
    seeded = await seed(async (text, params = []) => {
      let n = 0;
      // deno-lint-ignore no-explicit-any
      await sql.unsafe(text.replace(/\?/g, () => `$${++n}`), params as any[]);
    }, "?::text::jsonb");
  } finally {
    await sql.end();
  }
  const store = await openStore({ kind, url: testPostgresUrl!, schema });
  return {
    store,
    seeded,
    async [Symbol.asyncDispose]() {
      await store.close();
      await dropSchema(schema);
    },
  };
}

async function checkpointStates(store: Store) {
  const out: Record<string, unknown> = {};
  for (const session of ["s1", "s2"]) {
    for (const cp of (await store.listCheckpoints("t", session, { per_page: 100 })).items) {
      out[cp.checkpoint_id] = cp.state;
    }
  }
  return out;
}

for (const kind of storeKinds) {
  Deno.test(`migration 2 (${kind}): every checkpoint keeps its conversation`, async () => {
    await using fx = await migrateVersionOne(kind);
    const { store, seeded } = fx;
    const expected = Object.fromEntries(
      seeded.checkpoints.map((cp) => [cp.id, {
        messages: cp.messages,
        context: cp.context,
        pending_tool_calls: cp.pending,
        step: cp.step,
      }]),
    );
    assert.deepEqual(await checkpointStates(store), expected);
    assert.deepEqual((await store.getCheckpoint("t", "s2", "cpA"))?.state, expected.cpA);
    assert.deepEqual(await store.allMessages("t", "s1"), seeded.current.s1);
    assert.deepEqual(await store.allMessages("t", "s2"), seeded.current.s2);
    const start = await store.readStart("t", "s1");
    assert.equal(start.checkpoint?.checkpoint_id, "cp0", "the latest checkpoint of s1");
    assert.deepEqual(start.messages, seeded.current.s1);

    // The conversation goes on, and a fork back to the old branch brings `b` back.
    const [next] = await store.appendMessages("t", "s2", [{
      role: "user",
      content: [{ type: "text", value: "after the migration" }],
    }]);
    assert.deepEqual(await store.allMessages("t", "s2"), [...seeded.current.s2, next]);
    await store.createRun("t", {
      run_id: "r-fork",
      session_id: "s2",
      parent_checkpoint_id: "cpA",
      owner: "o",
      fork_checkpoint_id: "cpA",
    });
    assert.deepEqual(await store.allMessages("t", "s2"), seeded.forked);
    assert.deepEqual(await checkpointStates(store), expected, "forking changes no checkpoint");
  });
}
