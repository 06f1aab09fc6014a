/**
 * Migration 11: a run's steering inbox (double texting's `steer`). `steering` holds the messages
 * sent to a running run that it has not taken yet (a JSON array of message records, NULL when
 * none): any replica writes them, the run's owner takes them at its next step boundary.
 */
import type { Migration } from "./types.ts";

/** The `steering` column of runs. */
export const runSteering: Migration = {
  version: 11,
  name: "run_steering",
  sqlite: [`ALTER TABLE runs ADD COLUMN steering TEXT`],
  postgres: [`ALTER TABLE runs ADD COLUMN steering JSONB`],
};
