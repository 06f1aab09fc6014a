/**
 * What the kind of generated id costs the store as it grows (`deno run -A --no-prompt
 * bench/store_ids.ts`): runs of new sessions written through the Store seam exactly as a run
 * writes them (`createRun` with the user message, `finishRun` with the answer and its checkpoint),
 * 16 at a time (one group commit on SQLite), on SQLite or PostgreSQL, once with random ids
 * (UUID v4, what agentd generated before) and once with time-ordered ids (`newId`, UUID v7) for
 * every session, run, message and checkpoint. Prints the process CPU and the wall time a run of
 * each block of `--block` runs: random keys land on a random page of every index on them, which
 * the store reads back and writes again; time-ordered keys all land on the last one.
 *
 * Flags: --runs N (default 50000), --block N (default 10000), --store sqlite|postgres (default
 * sqlite). PostgreSQL (AGENTD_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test,
 * a schema of its own dropped at the end) commits each boundary with a WAL flush, so its wall
 * time follows the disk: give it fewer runs (`--runs 10000 --block 2500`); its server's CPU is not
 * in the process CPU printed.
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { newId } from "../src/ids.ts";
import { newMessages, openStore, type Store } from "../src/store/mod.ts";
import { tempDir } from "../tests/_kit/mod.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "50000" },
    block: { type: "string", default: "10000" },
    store: { type: "string", default: "sqlite" },
  },
});
const RUNS = Number(flags.runs);
const BLOCK = Number(flags.block);
const CONCURRENCY = 16;
const TENANT = "bench";
const PG_URL = Deno.env.get("AGENTD_BENCH_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";

const SCHEMES: [string, () => string][] = [
  ["random (v4)", () => crypto.randomUUID()],
  ["time-ordered (v7)", () => newId()],
];

/** One run of a new session, every id from `id`. */
async function run(store: Store, id: () => string): Promise<void> {
  const session = id();
  const runId = id();
  const text = (value: string) => [{ type: "text" as const, value }];
  await store.createRun(TENANT, {
    run_id: runId,
    session_id: session,
    parent_checkpoint_id: null,
    owner: "bench",
    create_session: true,
    expect_clock: 0,
    messages: newMessages(
      session,
      [{ role: "user", content: text("a question"), message_id: id() }],
      runId,
      Date.now(),
    ),
  });
  await store.finishRun(runId, {
    status: "completed",
    result: { text: "an answer", context: null },
  }, {
    tenant_id: TENANT,
    session_id: session,
    run_id: runId,
    messages: newMessages(
      session,
      [{ role: "assistant", content: text("an answer"), message_id: id() }],
      runId,
      Date.now(),
    ),
    checkpoint: {
      checkpoint_id: id(),
      parent_id: null,
      state: { context: null, pending_tool_calls: [], step: 1 },
    },
  });
}

/** µs of process CPU and of wall time a run, for each block of runs. */
async function measure(store: Store, id: () => string): Promise<string[]> {
  const cells: string[] = [];
  let cpu = process.cpuUsage();
  let wall = performance.now();
  for (let done = 0; done < RUNS; done += CONCURRENCY) {
    await Promise.all(Array.from({ length: CONCURRENCY }, () => run(store, id)));
    if ((done + CONCURRENCY) % BLOCK < CONCURRENCY) {
      const used = process.cpuUsage(cpu);
      const ms = performance.now() - wall;
      cells.push(
        `${((used.user + used.system) / BLOCK).toFixed(0)} (${(ms * 1000 / BLOCK).toFixed(0)})`,
      );
      cpu = process.cpuUsage();
      wall = performance.now();
    }
  }
  return cells;
}

async function sqlite(id: () => string): Promise<string[]> {
  await using dir = await tempDir("agentd_bench_ids_");
  const store = await openStore({ kind: "sqlite", path: dir.join("agentd.db") });
  try {
    return await measure(store, id);
  } finally {
    await store.close();
  }
}

async function pg(id: () => string): Promise<string[]> {
  const schema = `agentd_bench_ids_${Date.now().toString(36)}`;
  const sql = postgres(PG_URL, { max: 1, onnotice: () => {} });
  let store: Store | undefined;
  try {
    store = await openStore({ kind: "postgres", url: PG_URL, schema });
    return await measure(store, id);
  } finally {
    await store?.close();
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await sql.end();
  }
}

// `measure` reports whole blocks only.
const blocks = Array.from(
  { length: Math.floor(RUNS / BLOCK) },
  (_, i) => `runs ${(i * BLOCK) / 1000}k–${((i + 1) * BLOCK) / 1000}k`,
);
console.log(
  `store_ids: ${RUNS} runs of new sessions, ${CONCURRENCY} at a time; µs of CPU a run (wall)`,
);
console.log(`| store | ids | ${blocks.join(" | ")} |`);
console.log(`| --- | --- | ${blocks.map(() => "---:").join(" | ")} |`);
const [store, measureStore] = flags.store === "postgres" ? ["PostgreSQL", pg] : ["SQLite", sqlite];
for (const [name, id] of SCHEMES) {
  console.log(`| ${store} | ${name} | ${(await measureStore(id)).join(" | ")} |`);
}
