/**
 * A session's conversation in SQLite, as the write methods change it inside their transaction:
 * the message clock that moves with every change, the checks a change must pass (the session
 * exists, no other run is running in it), appending messages, reading the conversation of a
 * moment, and restoring a checkpoint's conversation (a fork). See docs/storage.md.
 */
import type { Message } from "../../api/schemas.ts";
import { storeErrors } from "../errors.ts";
import { messageValues, toMessage } from "../records.ts";
import { jsonText } from "../rows.ts";
import type { Connection } from "./connection.ts";
import { CURRENT, decode, MESSAGE_COLUMNS, VISIBLE_AT } from "./rows.ts";

/**
 * Bumps the session's `updated_at` and moves its message clock on by `ticks`; returns the clock
 * before the move, or null when the tenant has no such session.
 */
export function advance(
  conn: Connection,
  tenant: string,
  sessionId: string,
  ticks: number,
  now: number,
): number | null {
  const row = conn.get(
    `UPDATE sessions SET updated_at = ?, message_clock = message_clock + ?
     WHERE tenant_id = ? AND session_id = ? RETURNING message_clock`,
    now,
    ticks,
    tenant,
    sessionId,
  );
  return row ? (row.message_clock as number) - ticks : null;
}

/** Throws `session_not_found` unless the tenant has the session. */
export function requireSession(conn: Connection, tenant: string, sessionId: string): void {
  const found = conn.get(
    "SELECT 1 AS found FROM sessions WHERE tenant_id = ? AND session_id = ?",
    tenant,
    sessionId,
  );
  if (!found) throw storeErrors.sessionNotFound(sessionId);
}

/**
 * Throws 409003 when a run other than `runId` is running in the session (a run queued with its
 * start pending has written nothing yet): its conversation must not change under that run. Called inside the write transaction, so no run can start between
 * this check and the write.
 */
export function requireIdle(
  conn: Connection,
  tenant: string,
  sessionId: string,
  runId: string | null,
): void {
  const running = conn.get(
    `SELECT 1 AS found FROM runs WHERE tenant_id = ? AND session_id = ? AND status = 'running'
     AND start_pending = 0 AND run_id IS NOT ?`,
    tenant,
    sessionId,
    runId,
  );
  if (running) throw storeErrors.sessionBusy(sessionId);
}

/**
 * Throws 409003 when a run is queued behind the session's runs (its start pending, migration 14):
 * it is the session's next run, so a new one must not start ahead of it. A used `runId` is still
 * 409002.
 */
export function requireNoQueued(
  conn: Connection,
  tenant: string,
  sessionId: string,
  runId: string,
): void {
  const queued = conn.get(
    `SELECT 1 AS found FROM runs WHERE tenant_id = ? AND session_id = ? AND status = 'running'
     AND start_pending = 1`,
    tenant,
    sessionId,
  );
  if (!queued) return;
  requireRunIdFree(conn, runId);
  throw storeErrors.sessionBusy(sessionId);
}

/** Throws 409002 when a run of any tenant has `runId` (run ids are global). */
export function requireRunIdFree(conn: Connection, runId: string): void {
  if (conn.get("SELECT 1 AS found FROM runs WHERE run_id = ?", runId)) {
    throw storeErrors.runExists(runId);
  }
}

/**
 * Appends message records to the conversation at clock ticks `clock + 1`, `clock + 2`, ...
 * (which are also their places); 409005 when an id is in the current conversation.
 */
export function insertMessages(
  conn: Connection,
  tenant: string,
  sessionId: string,
  messages: Message[],
  clock: number,
): void {
  messages.forEach((message, i) => {
    const m = messageValues(message);
    try {
      conn.run(
        `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content,
         tool_calls, tool_call_id, created_at, pos, added_clock)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        tenant,
        sessionId,
        m.message_id,
        m.run_id,
        m.role,
        JSON.stringify(m.content),
        jsonText(m.tool_calls),
        m.tool_call_id,
        m.created_at,
        clock + i + 1,
        clock + i + 1,
      );
    } catch (error) {
      // `messages_current_id` is the table's only unique key besides `seq`.
      if (String((error as Error).message).includes("UNIQUE constraint failed")) {
        throw storeErrors.messageExists(m.message_id);
      }
      throw error;
    }
  });
}

/** The current conversation of a session, oldest first. */
export function currentMessages(conn: Connection, tenant: string, sessionId: string): Message[] {
  return conn.all(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} ORDER BY pos`,
    tenant,
    sessionId,
  ).map((r) => toMessage(decode.message(r)));
}

/** The conversation of a session at clock `mark`, oldest first. */
export function messagesAt(
  conn: Connection,
  tenant: string,
  sessionId: string,
  mark: number,
): Message[] {
  return conn.all(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${VISIBLE_AT} ORDER BY pos`,
    tenant,
    sessionId,
    mark,
    mark,
  ).map((r) => toMessage(decode.message(r)));
}

/**
 * Makes the conversation at checkpoint `checkpointId` the current one, at clock `clock`: current
 * messages it did not have leave, messages it had that left since come back (as copies in their
 * old places). Returns `clock`.
 */
export function restore(
  conn: Connection,
  tenant: string,
  sessionId: string,
  checkpointId: string,
  clock: number,
): number {
  const found = conn.get(
    `SELECT message_clock FROM checkpoints
     WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?`,
    tenant,
    sessionId,
    checkpointId,
  );
  if (!found) throw storeErrors.checkpointNotFound(checkpointId);
  const mark = found.message_clock as number;
  conn.run(
    `UPDATE messages SET removed_clock = ? WHERE ${CURRENT} AND added_clock > ?`,
    clock,
    tenant,
    sessionId,
    mark,
  );
  conn.run(
    `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
     tool_call_id, created_at, pos, added_clock)
     SELECT tenant_id, session_id, message_id, run_id, role, content, tool_calls, tool_call_id,
     created_at, pos, ? FROM messages WHERE tenant_id = ? AND session_id = ?
     AND added_clock <= ? AND removed_clock > ?`,
    clock,
    tenant,
    sessionId,
    mark,
    mark,
  );
  return clock;
}
