/**
 * Migration 14: a run queued behind its session's runs (its start pending, migration 12) keeps
 * the session busy for a new run, waiting for a slot or claimed and not yet begun: it is the
 * session's next run, so a start with `multitask_strategy: "reject"` is refused (409003) rather
 * than slipping ahead of it. `runs_one_running` passes over such runs (their input is not in the
 * conversation yet), so `agentd_start_run_with_request` looks for one first; a used run id is
 * still `run_exists`. The SQLite store checks the same in `createRun`.
 */
import { START_RUN_WITH_REQUEST } from "./0007_run_attempts.ts";
import type { Migration } from "./types.ts";

const BEGIN = "LANGUAGE plpgsql AS $$\nBEGIN\n";

/** What the function checks first: a run queued behind the session, or the run id taken. */
const QUEUED_CHECK =
  `  IF EXISTS (SELECT 1 FROM runs WHERE tenant_id = p_tenant AND session_id = p_session
      AND status = 'running' AND start_pending) THEN
    IF EXISTS (SELECT 1 FROM runs WHERE run_id = p_run) THEN
      RAISE EXCEPTION 'run_exists';
    END IF;
    RAISE EXCEPTION 'session_busy';
  END IF;
`;

/** `agentd_start_run_with_request` (migration 7), refusing a session with a queued run. */
function startRefusingQueued(): string {
  if (
    !START_RUN_WITH_REQUEST.startsWith("CREATE FUNCTION") || !START_RUN_WITH_REQUEST.includes(BEGIN)
  ) {
    throw new Error("migration 14 no longer matches migration 7's text");
  }
  return START_RUN_WITH_REQUEST.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
    .replace(BEGIN, () => BEGIN + QUEUED_CHECK);
}

/** The start function that counts a queued run as the session's. */
export const queuedRunHoldsSession: Migration = {
  version: 14,
  name: "queued_run_holds_session",
  sqlite: [],
  postgres: [startRefusingQueued()],
};
