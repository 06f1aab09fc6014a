/**
 * Migration 8: a run counts its hand-overs (`handoffs`): the attempts that ended because their
 * replica shut down and released the run. `runtime.runs.max_attempts` bounds only the attempts
 * lost with their replica (`attempt - handoffs`), so a rolling deploy never fails a run.
 */
import type { Migration } from "./types.ts";

/** The `runs.handoffs` column. */
export const runHandoffs: Migration = {
  version: 8,
  name: "run_handoffs",
  sqlite: ["ALTER TABLE runs ADD COLUMN handoffs INTEGER NOT NULL DEFAULT 0"],
  postgres: ["ALTER TABLE runs ADD COLUMN handoffs INTEGER NOT NULL DEFAULT 0"],
};
