/**
 * Storage benchmark (`deno task bench:storage`): one session grows turn by turn through the Store
 * seam exactly as runs write it (`readStart`, `createRun` with the user message, `finishRun` with
 * the answer and its checkpoint), on SQLite and on PostgreSQL (`AGENTD_BENCH_POSTGRES_URL`,
 * default postgres://postgres@127.0.0.1:5432/test; skipped when unreachable). At 1, 10, 100 and
 * 1,000 turns it prints the bytes on disk of the messages and checkpoints tables (with their
 * indexes), what copying the conversation into every checkpoint would have taken, and what
 * starting the next turn reads (`readStart`: time, median of 20, and the conversation's JSON size).
 *
 * Flags: --turns N (default 1000), --words N (words of an answer, default 40).
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { newMessages, openStore, type Store } from "../src/store/mod.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: { turns: { type: "string", default: "1000" }, words: { type: "string", default: "40" } },
});
const TURNS = Number(flags.turns);
const ANSWER = Array.from({ length: Number(flags.words) }, (_, i) => `word${i}`).join(" ");
const PG_URL = Deno.env.get("AGENTD_BENCH_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";
const MARKS = [1, 10, 100, 1000, 10_000].filter((n) => n <= TURNS);
const TENANT = "bench";
const SESSION = "long";

interface Row {
  store: string;
  turns: number;
  messages: number;
  checkpoints: number;
  copies: number;
  readMs: number;
  readBytes: number;
}

/** One turn, written as a run writes it. */
async function turn(store: Store, n: number, parent: string | null): Promise<string> {
  const run = crypto.randomUUID();
  const start = await store.readStart(TENANT, SESSION);
  const user = {
    role: "user" as const,
    content: [{ type: "text" as const, value: `question ${n}` }],
  };
  await store.createRun(TENANT, {
    run_id: run,
    session_id: SESSION,
    parent_checkpoint_id: parent,
    owner: "bench",
    create_session: start.clock === null,
    expect_clock: start.clock ?? 0,
    messages: newMessages(SESSION, [user], run, Date.now()),
  });
  const checkpoint_id = crypto.randomUUID();
  const answer = {
    role: "assistant" as const,
    content: [{ type: "text" as const, value: ANSWER }],
  };
  await store.finishRun(run, { status: "completed", result: { text: ANSWER, context: null } }, {
    tenant_id: TENANT,
    session_id: SESSION,
    run_id: run,
    messages: newMessages(SESSION, [answer], run, Date.now()),
    checkpoint: {
      checkpoint_id,
      parent_id: parent,
      state: { context: null, pending_tool_calls: [], step: n },
    },
  });
  return checkpoint_id;
}

/** Median time of `readStart` for the next turn, and the JSON size of what it returns. */
async function readCost(store: Store): Promise<{ ms: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const start = await store.readStart(TENANT, SESSION);
    times.push(performance.now() - t);
    bytes = JSON.stringify(start).length;
  }
  times.sort((a, b) => a - b);
  return { ms: times[10], bytes };
}

async function measure(
  name: string,
  store: Store,
  sizes: () => Promise<{ messages: number; checkpoints: number }>,
): Promise<Row[]> {
  const rows: Row[] = [];
  let parent: string | null = null;
  // What checkpoints that copy the conversation would hold: every one its whole conversation.
  let copies = 0;
  let conversation = 0;
  for (let n = 1; n <= TURNS; n++) {
    parent = await turn(store, n, parent);
    conversation = JSON.stringify((await store.readStart(TENANT, SESSION)).messages).length;
    copies += conversation;
    if (MARKS.includes(n)) {
      const { ms, bytes } = await readCost(store);
      rows.push({ store: name, turns: n, ...await sizes(), copies, readMs: ms, readBytes: bytes });
    }
  }
  return rows;
}

async function sqlite(): Promise<Row[]> {
  const dir = await Deno.makeTempDir({ prefix: "agentd_bench_storage_" });
  const path = `${dir}/agentd.db`;
  const store = await openStore({ kind: "sqlite", path });
  try {
    return await measure("SQLite", store, () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const rows = db.prepare(
          `SELECT s.tbl_name AS name, sum(d.pgsize) AS bytes FROM dbstat d
           JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name`,
        ).all();
        const size = (t: string) => Number(rows.find((r) => r.name === t)?.bytes ?? 0);
        return Promise.resolve({ messages: size("messages"), checkpoints: size("checkpoints") });
      } finally {
        db.close();
      }
    });
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function pg(): Promise<Row[]> {
  const schema = `agentd_bench_storage_${Date.now().toString(36)}`;
  const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
  let store: Store | undefined;
  try {
    store = await openStore({ kind: "postgres", url: PG_URL, schema });
    return await measure("PostgreSQL", store, async () => {
      const [row] = await sql.unsafe(
        `SELECT pg_total_relation_size('"${schema}".messages') AS messages,
          pg_total_relation_size('"${schema}".checkpoints') AS checkpoints`,
      );
      return { messages: Number(row.messages), checkpoints: Number(row.checkpoints) };
    });
  } catch (error) {
    console.error(`PostgreSQL skipped: ${(error as Error).message}`);
    return [];
  } finally {
    await store?.close();
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await sql.end();
  }
}

const kib = (n: number) => (n / 1024).toFixed(0);
const rows = [...await sqlite(), ...await pg()];
console.log(`bench:storage: one session, ${TURNS} turns, answers of ${flags.words} words`);
console.log(
  "store      | turns | messages KiB | checkpoints KiB | ratio | copies would be KiB | readStart ms | reads KiB",
);
console.log(
  "-----------|-------|--------------|-----------------|-------|---------------------|--------------|----------",
);
for (const r of rows) {
  console.log(
    [
      r.store.padEnd(10),
      String(r.turns).padStart(5),
      kib(r.messages).padStart(12),
      kib(r.checkpoints).padStart(15),
      (r.checkpoints / r.messages).toFixed(2).padStart(5),
      kib(r.copies).padStart(19),
      r.readMs.toFixed(2).padStart(12),
      kib(r.readBytes).padStart(8),
    ].join(" | "),
  );
}
