/**
 * Migration 10: what a run did step by step (`GET /v1/runs/{run_id}/steps`), one row per step and
 * attempt: timings, tool calls and, when recorded, the model request (src/api/run_steps.ts). A
 * table of its own, so reading a run never reads its steps, and written by its own store method
 * (`saveRunStep`), so the step and finish boundaries never change.
 */
import type { Migration } from "./types.ts";

/** The table and its index, with `json` the dialect's JSON column type. */
const ddl = (json: string): string[] => [
  `CREATE TABLE run_steps (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    trace ${json} NOT NULL,
    PRIMARY KEY (run_id, step, attempt)
  )`,
  `CREATE INDEX run_steps_session ON run_steps (tenant_id, session_id)`,
];

/** The `run_steps` table. */
export const runSteps: Migration = {
  version: 10,
  name: "run_steps",
  sqlite: ddl("TEXT"),
  postgres: ddl("JSONB"),
};
