/**
 * Migration 6: what the model reported on a run, in one JSON column of `runs`: token usage per
 * model step and in total, each step's finish reason and the run's, and the provider's warnings
 * (docs/api.md, "Usage and finish reasons"). Written once, when the run ends.
 */
import type { Migration } from "./types.ts";

/** The `runs.model_report` column. */
export const runModelReport: Migration = {
  version: 6,
  name: "run_model_report",
  sqlite: ["ALTER TABLE runs ADD COLUMN model_report TEXT"],
  postgres: ["ALTER TABLE runs ADD COLUMN model_report JSONB"],
};
