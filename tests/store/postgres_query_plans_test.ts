/**
 * No statement of the PostgreSQL store reads a whole table that grows with use (runs, sessions,
 * messages, checkpoints, steps, links), the guarantee tests/store/sqlite/query_plans_test.ts gives
 * for SQLite: the store contract runs with `auto_explain` loaded into each of the store's
 * connections, which sends the plan of every statement executed, with its parameters, as a notice;
 * `log_nested_statements` adds the statements inside the plpgsql functions (`agentd_commit_step`,
 * `agentd_start_run_with_request`, ...), which an `EXPLAIN` of the calling statement hides. The
 * connections plan with `enable_seqscan = off`: PostgreSQL rightly reads a small table in full,
 * so only a scan that no index can serve is left.
 *
 * A plan node fails the test when it reads a growing table
 * - as a `Seq Scan`: no index serves the query;
 * - as an `Index Scan`, `Index Only Scan` or `Bitmap Index Scan` without an `Index Cond`: with
 *   sequential scans off the planner walks a whole index instead, a full scan in disguise. Two
 *   walks are bounded and pass: one of a partial index of running runs (`runs_running`,
 *   `runs_one_running`: as many entries as runs in flight, not every run kept; a partial index
 *   of current messages holds a growing set and is no exemption), and one under a `Limit` with
 *   only row-passing nodes between (the index yields rows in the `ORDER BY`'s order, no `Sort`
 *   reads them all first) and no `Filter` on the walk (it could skip any number of rows first).
 *
 * Judged is what the contract runs to completion: a statement that fails sends no plan, and the
 * migrations' one-off conversions, which read whole tables by design, run before noting starts.
 * `auto_explain` and its settings need a superuser, which the test database's `postgres` is.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore } from "../../src/store/postgres/mod.ts";
import { dropSchema, skipNotice, testPostgresUrl, uniqueName } from "../_kit/mod.ts";
import { GROWING_TABLES } from "./contract/helpers.ts";
import { storeContract } from "./contract/mod.ts";

const ignore = testPostgresUrl === undefined;
if (ignore) skipNotice("PostgreSQL query plan test", "AGENTD_TEST_POSTGRES_URL");

/** A node of a plan in `auto_explain`'s JSON. */
interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

/** Plans sent by the store's connections once open, by statement text (the last of each). */
const plans = new Map<string, PlanNode>();
/** Whether the store is open (its migrations are not judged). */
let open = false;

/** Startup settings (postgres.js sends a URL's unknown query parameters as such). */
const SETTINGS = {
  session_preload_libraries: "auto_explain",
  "auto_explain.log_min_duration": "0",
  "auto_explain.log_nested_statements": "on",
  "auto_explain.log_level": "notice",
  "auto_explain.log_format": "json",
  enable_seqscan: "off",
};

/** The test database's URL with `SETTINGS`. */
function explainingUrl(): string {
  const url = new URL(testPostgresUrl!);
  for (const [name, value] of Object.entries(SETTINGS)) url.searchParams.set(name, value);
  return url.href;
}

/** Notes a plan `auto_explain` sent: `duration: 0.01 ms  plan:\n{"Query Text": ..., ...}`. */
function notePlan(message: string): void {
  const start = message.indexOf("{");
  if (!message.startsWith("duration:") || start < 0) return;
  const explained = JSON.parse(message.slice(start));
  plans.set(explained["Query Text"], explained.Plan);
}

// Kept until the plans are judged (its partial indexes are read), then dropped.
const schema = uniqueName("agentd_plans");
storeContract("postgres, every plan noted", async (clock) => {
  const store = await openPostgresStore({
    url: explainingUrl(),
    schema,
    clock,
    onNotice: (notice) => open && notePlan(notice.message),
  });
  open = true;
  return { store, clock, schema, [Symbol.asyncDispose]: () => store.close() };
}, { ignore });

/** The nodes between a `Limit` and a scan that pass rows on as they come. */
const PASSING = new Set(["Limit", "LockRows", "Result", "Subquery Scan"]);

/**
 * The full reads of a growing table in `node`'s plan: `bounded` when a Limit above stops the walk,
 * `heap` the table of the Bitmap Heap Scan above (its Bitmap Index Scans name no table).
 */
function fullReads(node: PlanNode, running: Set<string>, bounded = false, heap?: string): string[] {
  const found: string[] = [];
  const type = node["Node Type"];
  const table = node["Relation Name"] ?? heap;
  const index = node["Index Name"];
  if (table && GROWING_TABLES.includes(table)) {
    if (type === "Seq Scan") found.push(`Seq Scan on ${table}`);
    else if (index && !node["Index Cond"] && !running.has(index) && !(bounded && !node.Filter)) {
      found.push(`${type} on ${table} using ${index} without an Index Cond`);
    }
  }
  const below = type === "Limit" || (bounded && PASSING.has(type));
  const under = type === "Bitmap Heap Scan" ? node["Relation Name"] : heap;
  for (const child of node.Plans ?? []) found.push(...fullReads(child, running, below, under));
  return found;
}

Deno.test({
  name: "postgres: no statement of the store scans a growing table in full",
  ignore,
  fn: async () => {
    await using stack = new AsyncDisposableStack();
    stack.defer(() => dropSchema(schema));
    assert.ok(plans.size > 50, `only ${plans.size} plans noted`);
    // The statements inside the plpgsql functions were explained too.
    assert.ok(
      [...plans.keys()].some((sql) => /\bp_run\b/.test(sql)),
      "no statement of a plpgsql function was explained",
    );
    const running = await runningIndexes();
    const scans: string[] = [];
    for (const [sql, plan] of plans) {
      for (const read of fullReads(plan, running)) {
        scans.push(`${read}\n  in: ${sql.replace(/\s+/g, " ").trim()}`);
      }
    }
    assert.deepEqual(scans, []);
  },
});

/** The names of the partial indexes of running runs in the contract's schema. */
async function runningIndexes(): Promise<Set<string>> {
  const sql = postgres(testPostgresUrl!, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`SELECT indexname FROM pg_indexes
      WHERE schemaname = ${schema} AND tablename = 'runs'
        AND indexdef LIKE '% WHERE %(status = ''running''::text)%'`;
    return new Set(rows.map((row) => String(row.indexname)));
  } finally {
    await sql.end();
  }
}
