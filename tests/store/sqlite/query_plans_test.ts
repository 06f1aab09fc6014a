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

Deno.test("sqlite: no statement of the store scans a growing table in full", async () => {
  await using _ = dir;
  assert.ok(statements.size > 50, `only ${statements.size} statements noted`);
  using db = new DatabaseSync(file);
  // The planner's view of a database with history: ANALYZE would make it a small one's.
  const scans: string[] = [];
  for (const sql of statements) {
    if (!/^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)/i.test(sql)) continue;
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => String(r.detail));
    for (const step of plan) {
      const table = /^SCAN (\w+)(?: AS \w+)?$/.exec(step)?.[1];
      if (table && GROWING_TABLES.includes(table)) {
        scans.push(`${step}\n  in: ${sql.replace(/\s+/g, " ")}`);
      }
    }
  }
  assert.deepEqual(scans, []);
});
