/**
 * Migration 14: a run queued behind its session's runs (its start pending, migration 12) keeps
 * the session busy for a new run, waiting for a slot or claimed and not yet begun: it is the
 * session's next run, so a start with `multitask_strategy: "reject"` is refused (409003) rather
 * than slipping ahead of it. `runs_one_running` passes over such runs (their input is not in the
 * conversation yet), so `agentd_start_run_with_request` looks for one first; a used run id is
 * still `run_exists`. The SQLite store checks the same in `createRun`.
 */
import type { Migration } from "./types.ts";

/** `agentd_start_run_with_request` (migration 7), refusing a session with a queued run. */
const START_RUN_WITH_REQUEST = `CREATE OR REPLACE FUNCTION agentd_start_run_with_request(
  p_request jsonb, p_tenant text, p_session text, p_run text, p_parent text, p_owner text,
  p_now bigint, p_create boolean, p_expect bigint, p_fork text, p_messages jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM runs WHERE tenant_id = p_tenant AND session_id = p_session
      AND status = 'running' AND start_pending) THEN
    IF EXISTS (SELECT 1 FROM runs WHERE run_id = p_run) THEN
      RAISE EXCEPTION 'run_exists';
    END IF;
    RAISE EXCEPTION 'session_busy';
  END IF;
  PERFORM agentd_start_run(p_tenant, p_session, p_run, p_parent, p_owner, p_now, p_create,
    p_expect, p_fork, p_messages);
  RETURN QUERY UPDATE runs SET request = p_request WHERE run_id = p_run RETURNING *;
END $$`;

/** The start function that counts a queued run as the session's. */
export const queuedRunHoldsSession: Migration = {
  version: 14,
  name: "queued_run_holds_session",
  sqlite: [],
  postgres: [START_RUN_WITH_REQUEST],
};
