/**
 * What a replica's periodic store calls cost as the store keeps more finished runs (issue 24,
 * migration 13): the run queue's claim (after every run that ends) and depth (every poll), the
 * batched heartbeat and the lease sweep, on SQLite and on PostgreSQL
 * (`AGENTD_BENCH_POSTGRES_URL`, default postgres://postgres@127.0.0.1:5432/test; skipped when
 * unreachable, its schema dropped after). At each mark of finished runs it prints the median of
 * 50 calls in µs, with `--executing` runs (16) executing meanwhile, which the heartbeat renews and
 * the poll asks about. None of them should grow with the history, nor faster than the runs
 * executing: on SQLite they run on the event loop, so a scan of every run kept stalls every
 * stream.
 *
 *   deno run -A --no-prompt bench/store_history.ts [--runs 1000,10000,50000] [--executing 16]
 */
import { parseArgs } from "node:util";
import postgres from "postgres";
import { openStore, type Store } from "../src/store/mod.ts";
import { tempDir } from "../tests/_kit/mod.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "1000,10000,50000" },
    executing: { type: "string", default: "16" },
  },
});
const MARKS = flags.runs.split(",").map(Number).sort((a, b) => a - b);
const PG_URL = Deno.env.get("AGENTD_BENCH_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";
const TENANT = "bench";
const OWNER = "replica-a";
const EXECUTING = Number(flags.executing);
const BATCH = 200;

/** Median µs of `calls` sequential calls of `fn`. */
async function median(calls: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await fn();
    times.push((performance.now() - t) * 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(calls / 2)];
}

/** Starts a run in a new session of its own. */
async function startRun(store: Store): Promise<string> {
  const session = await store.createSession(TENANT, {});
  const run = await store.createRun(TENANT, {
    run_id: crypto.randomUUID(),
    session_id: session.session_id,
    parent_checkpoint_id: null,
    owner: OWNER,
  });
  return run.run_id;
}

/** Adds `n` finished runs, `BATCH` at a time. */
async function addFinished(store: Store, n: number): Promise<void> {
  for (let done = 0; done < n; done += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, n - done) }, async () => {
        await store.finishRun(await startRun(store), { status: "completed" });
      }),
    );
  }
}

/**
 * Prints one row per mark for `store`; `analyze` refreshes the planner's statistics after each
 * fill, as PostgreSQL's autovacuum does within a minute of such a change.
 */
async function measure(name: string, store: Store, analyze?: () => Promise<void>): Promise<void> {
  await store.migrate();
  const executing: { run_id: string; attempt: number }[] = [];
  for (let i = 0; i < EXECUTING; i++) {
    executing.push({ run_id: await startRun(store), attempt: 1 });
  }
  let kept = 0;
  for (const mark of MARKS) {
    await addFinished(store, mark - kept);
    kept = mark;
    await analyze?.();
    const claim = await median(50, () => store.claimQueuedRuns(OWNER, 1));
    const depth = await median(50, () => store.queueDepth());
    const beat = await median(50, () => store.heartbeat(OWNER, executing));
    const poll = await median(50, () => store.runStatuses(executing.map((r) => r.run_id)));
    // A sweep that finds nothing lost: every lease is fresh.
    const sweep = await median(50, () => store.claimLostRuns(OWNER, Date.now(), 60_000, 3, 10));
    console.log(
      `| ${name} | ${EXECUTING} | ${mark.toLocaleString("en")} | ${claim.toFixed(0)} | ` +
        `${depth.toFixed(0)} | ${beat.toFixed(0)} | ${poll.toFixed(0)} | ${sweep.toFixed(0)} |`,
    );
  }
}

console.log(
  "| store | executing | finished runs | claim µs | depth µs | heartbeat µs | poll µs | sweep µs |",
);
console.log("|---|--:|--:|--:|--:|--:|--:|--:|");
{
  await using dir = await tempDir("agentd_bench_history_");
  const store = await openStore({ kind: "sqlite", path: dir.join("agentd.db") });
  try {
    await measure("SQLite", store);
  } finally {
    await store.close();
  }
}
const schema = `bench_history_${crypto.randomUUID().slice(0, 8)}`;
const store = await openStore({ kind: "postgres", url: PG_URL, schema }).catch(() => null);
if (!store) console.log("(PostgreSQL skipped: not reachable at AGENTD_BENCH_POSTGRES_URL)");
else {
  const sql = postgres(PG_URL, { onnotice: () => {} });
  try {
    await measure("PostgreSQL", store, async () => {
      await sql.unsafe(`ANALYZE ${schema}.runs`);
    });
  } finally {
    await store.close();
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await sql.end();
  }
}
