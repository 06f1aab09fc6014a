/**
 * Migration 12: enqueued runs (double texting's `enqueue`). A run enqueued behind its session's
 * unfinished run is stored at once, queued (`attempt` 0), with its start pending
 * (`start_pending`): its request, input included, is on its row and nothing of it is in the
 * conversation yet. The replica that claims it once the session's earlier runs ended writes its
 * start (its input into the conversation) and clears the flag. A session keeps one run whose
 * start is written and that is running: `runs_one_running` and `agentd_commit_step`'s check pass
 * over runs whose start is pending.
 */
import { DURABLE_COMMIT_STEP } from "./0005_durable_run_commits.ts";
import type { Migration } from "./types.ts";

const BUSY = "AND status = 'running' AND run_id IS DISTINCT FROM p_run) THEN";

/** `agentd_commit_step` whose session check passes over runs whose start is pending. */
function commitStepPassingPending(): string {
  if (!DURABLE_COMMIT_STEP.includes(BUSY)) {
    throw new Error("migration 12 no longer matches migration 5's text");
  }
  return DURABLE_COMMIT_STEP.replace(
    BUSY,
    "AND status = 'running' AND NOT start_pending AND run_id IS DISTINCT FROM p_run) THEN",
  );
}

/** The `start_pending` column, the index and the session check that pass over it. */
export const runEnqueue: Migration = {
  version: 12,
  name: "run_enqueue",
  sqlite: [
    `ALTER TABLE runs ADD COLUMN start_pending INTEGER NOT NULL DEFAULT 0`,
    `DROP INDEX runs_one_running`,
    `CREATE UNIQUE INDEX runs_one_running ON runs (tenant_id, session_id)
      WHERE status = 'running' AND start_pending = 0`,
  ],
  postgres: [
    `ALTER TABLE runs ADD COLUMN start_pending BOOLEAN NOT NULL DEFAULT false`,
    `DROP INDEX runs_one_running`,
    `CREATE UNIQUE INDEX runs_one_running ON runs (tenant_id, session_id)
      WHERE status = 'running' AND NOT start_pending`,
    commitStepPassingPending(),
  ],
};
