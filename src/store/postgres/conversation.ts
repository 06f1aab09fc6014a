/**
 * The checks a change of a session's conversation must pass in PostgreSQL: the session exists, and
 * no other run is running in it. (The boundaries of a run make theirs inside the functions of
 * migration 2, boundaries.ts.)
 */
import { storeErrors } from "../errors.ts";
import type { Query } from "./connection.ts";

/** Throws `session_not_found` unless the tenant has the session. */
export async function requireSession(q: Query, tenant: string, sessionId: string): Promise<void> {
  const rows = await q`SELECT seq FROM sessions WHERE tenant_id = ${tenant}
    AND session_id = ${sessionId}`;
  if (rows.length === 0) throw storeErrors.sessionNotFound(sessionId);
}

/**
 * Throws 409003 when a run other than `runId` is running in the session (a run queued with its
 * start pending has written nothing yet): its conversation must not change under that run. Called after the session row is locked, so a run cannot start
 * between this check and the write (`createRun` locks the same row first).
 */
export async function requireIdle(
  q: Query,
  tenant: string,
  sessionId: string,
  runId: string | null,
): Promise<void> {
  const running = await q`SELECT 1 FROM runs WHERE tenant_id = ${tenant}
    AND session_id = ${sessionId} AND status = 'running' AND NOT start_pending
    AND run_id IS DISTINCT FROM ${runId}`;
  if (running.length > 0) throw storeErrors.sessionBusy(sessionId);
}
