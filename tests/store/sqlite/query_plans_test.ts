/**
 * No statement of the SQLite store reads a whole table that grows with use (runs, sessions,
 * messages, checkpoints, steps): the store contract runs with its connection noting every
 * statement, then each is explained on the same file. SQLite runs on the event loop, so a scan
 * of every run ever kept stalls every stream, and more with each run (migration 13).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Connection } from "../../../src/store/sqlite/connection.ts";
import { openTestStore, tempDir } from "../../_kit/mod.ts";
import { GROWING_TABLES } from "../contract/helpers.ts";
import { storeContract } from "../contract/mod.ts";

const statements = new Set<string>();
type Method = (this: Connection, sql: string, ...params: unknown[]) => unknown;
const methods = Connection.prototype as unknown as Record<"all" | "get" | "run", Method>;
for (const name of ["all", "get", "run"] as const) {
  const real = methods[name];
  // Notes the statement and runs it, unchanged.
  methods[name] = function (sql, ...params) {
    statements.add(sql);
    return real.call(this, sql, ...params);
  };
}

const dir = await tempDir();
const file = dir.join("agentd.db");
storeContract(
  "sqlite, every statement noted",
  (clock) => openTestStore("sqlite", { clock, shared: { path: file } }),
);

/** One step of a statement's plan (`EXPLAIN QUERY PLAN`), as a tree: `parent` is a step's `id`. */
interface PlanStep {
  id: number;
  parent: number;
  detail: string;
}

/** Each noted statement that reads or writes rows, on one line, with its plan on `db`. */
function explained(db: DatabaseSync): { sql: string; plan: PlanStep[] }[] {
  return [...statements]
    .filter((sql) => /^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)/i.test(sql))
    .map((sql) => ({
      sql: sql.replace(/\s+/g, " "),
      plan: db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all()
        .map((r) => ({ id: Number(r.id), parent: Number(r.parent), detail: String(r.detail) })),
    }));
}

Deno.test("sqlite: no statement of the store scans a growing table in full", () => {
  assert.ok(statements.size > 50, `only ${statements.size} statements noted`);
  using db = new DatabaseSync(file);
  // The planner's view of a database with history: ANALYZE would make it a small one's.
  const scans: string[] = [];
  for (const { sql, plan } of explained(db)) {
    for (const { detail } of plan) {
      const table = /^SCAN (\w+)(?: AS \w+)?$/.exec(detail)?.[1];
      if (table && GROWING_TABLES.includes(table)) scans.push(`${detail}\n  in: ${sql}`);
    }
  }
  assert.deepEqual(scans, []);
});

// The last test: the directory goes with it.
Deno.test("sqlite: no statement reads a caller's list once per row it visits", async () => {
  await using _ = dir;
  using db = new DatabaseSync(file);
  // A list passed as JSON (`json_each(?)`, the runs a heartbeat renews) read by a correlated
  // subquery is read in full for every row of the outer loop: 500 running runs, 250,000 rows.
  const nested: string[] = [];
  for (const { sql, plan } of explained(db)) {
    const byId = new Map(plan.map((step) => [step.id, step]));
    for (const step of plan) {
      if (!/^SCAN \w+ VIRTUAL TABLE/.test(step.detail)) continue;
      for (let up = byId.get(step.parent); up; up = byId.get(up.parent)) {
        if (up.detail.startsWith("CORRELATED")) {
          nested.push(`${step.detail} under ${up.detail}\n  in: ${sql}`);
          break;
        }
      }
    }
  }
  assert.deepEqual(nested, []);
});
