/**
 * Migration 7: durable runs. A run record counts its attempts (`attempt`, 1 for the first); every
 * write of a run carries the attempt it was made by and the store refuses it once another attempt
 * took the run over (fencing). `request` keeps what the run was asked (without its input
 * messages, which the conversation holds) so any replica can resume it from its last checkpoint.
 *
 * PostgreSQL gets the fenced boundaries as functions wrapping migration 2's, each one statement:
 * `agentd_fence` locks the run row and raises `run_fenced` when the attempt differs or the run is
 * no longer running (a cancelled run keeps its last step), then the boundary runs as before.
 */
import type { Migration } from "./types.ts";

/** Raises `run_fenced` unless attempt `p_attempt` still owns the run (NULL: not fenced). */
const FENCE = `CREATE FUNCTION agentd_fence(p_run text, p_attempt integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_attempt IS NULL THEN
    RETURN;
  END IF;
  -- The row lock orders this write against a takeover (which moves the attempt) and a cancel.
  PERFORM 1 FROM runs WHERE run_id = p_run AND attempt = p_attempt
    AND status IN ('running', 'cancelled') FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'run_fenced' USING ERRCODE = 'P0001';
  END IF;
END $$`;

/** `agentd_commit_step`, fenced. */
const COMMIT_RUN_STEP = `CREATE FUNCTION agentd_commit_run_step(
  p_attempt integer, p_tenant text, p_session text, p_run text, p_now bigint, p_messages jsonb,
  p_checkpoint text, p_parent text, p_state jsonb
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agentd_fence(p_run, p_attempt);
  PERFORM agentd_commit_step(p_tenant, p_session, p_run, p_now, p_messages, p_checkpoint,
    p_parent, p_state);
END $$`;

/** `agentd_finish_run`, fenced. */
const FINISH_RUN_FENCED = `CREATE FUNCTION agentd_finish_run_fenced(
  p_attempt integer, p_run text, p_now bigint, p_status text, p_result jsonb, p_interrupt jsonb,
  p_error jsonb, p_tenant text, p_session text, p_messages jsonb, p_checkpoint text,
  p_parent text, p_state jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agentd_fence(p_run, p_attempt);
  RETURN QUERY SELECT * FROM agentd_finish_run(p_run, p_now, p_status, p_result, p_interrupt,
    p_error, p_tenant, p_session, p_messages, p_checkpoint, p_parent, p_state);
END $$`;

/** `agentd_start_run`, keeping the run's request on its row. */
export const START_RUN_WITH_REQUEST = `CREATE FUNCTION agentd_start_run_with_request(
  p_request jsonb, p_tenant text, p_session text, p_run text, p_parent text, p_owner text,
  p_now bigint, p_create boolean, p_expect bigint, p_fork text, p_messages jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  PERFORM agentd_start_run(p_tenant, p_session, p_run, p_parent, p_owner, p_now, p_create,
    p_expect, p_fork, p_messages);
  RETURN QUERY UPDATE runs SET request = p_request WHERE run_id = p_run RETURNING *;
END $$`;

/** The attempt and request columns, and the fenced boundary functions. */
export const runAttempts: Migration = {
  version: 7,
  name: "run_attempts",
  sqlite: [
    `ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1`,
    `ALTER TABLE runs ADD COLUMN request TEXT`,
  ],
  postgres: [
    `ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1, ADD COLUMN request JSONB`,
    FENCE,
    COMMIT_RUN_STEP,
    FINISH_RUN_FENCED,
    START_RUN_WITH_REQUEST,
  ],
};
