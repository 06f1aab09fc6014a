/**
 * Migration 5: every commit of a run waits for the WAL flush (PostgreSQL). Migration 2 committed
 * a run's start and intermediate steps with `synchronous_commit = off`, so a database crash
 * within ~3 × `wal_writer_delay` lost what a client had been told about: a started run with its
 * input, or a finished step, whose loss the run's end (written once the database was back) turned
 * into a hole in the conversation (tests/faults/durability_test.ts). `agentd_start_run` and
 * `agentd_commit_step` are re-created from migration 2's text without that setting, so their
 * commits take the server's setting, as every other write does. SQLite is unchanged.
 */
import { COMMIT_STEP, START_RUN } from "./0002_linear_checkpoints.ts";
import type { Migration } from "./types.ts";

/** Migration 2's function text without `skip`, as `CREATE OR REPLACE`. */
function without(text: string, skip: string): string {
  if (!text.includes(skip)) throw new Error("migration 5 no longer matches migration 2's text");
  return text.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION").replace(skip, "");
}

/** `agentd_commit_step` as migration 5 re-creates it (migration 12 derives from this text). */
export const DURABLE_COMMIT_STEP = without(
  COMMIT_STEP,
  "  -- A run's intermediate step need not wait for the WAL flush: the run's end commit waits " +
    "for it,\n  -- and that flush covers this step too. A client's own message write (no run) " +
    "stays synchronous.\n  IF p_run IS NOT NULL THEN\n" +
    "    PERFORM set_config('synchronous_commit', 'off', true);\n  END IF;\n",
);

/** `agentd_start_run` and `agentd_commit_step`, their commits flushed. */
export const durableRunCommits: Migration = {
  version: 5,
  name: "durable_run_commits",
  sqlite: [],
  postgres: [
    without(
      START_RUN,
      "  -- Not flushed at commit: the run's end commit flushes the WAL up to and past this one.\n" +
        "  PERFORM set_config('synchronous_commit', 'off', true);\n",
    ),
    DURABLE_COMMIT_STEP,
  ],
};
