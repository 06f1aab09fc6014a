/**
 * How the SQLite store reads rows: the columns its statements select, the conditions that pick a
 * session's conversation, and the row decoders for JSON kept as TEXT.
 */
import type { SQLInputValue } from "node:sqlite";
import { rowDecoders } from "../rows.ts";

/** The columns of a run record. */
export const RUN_COLUMNS =
  "seq, run_id, session_id, tenant_id, status, attempt, parent_checkpoint_id, checkpoint_id, result, " +
  "interrupt_payload, error, model_report, created_at, updated_at";
/** The columns of a message record. */
export const MESSAGE_COLUMNS =
  "pos, message_id, session_id, run_id, role, content, tool_calls, tool_call_id, created_at";
/** The columns of a checkpoint record. */
export const CHECKPOINT_COLUMNS =
  "seq, checkpoint_id, session_id, run_id, parent_id, step, state, message_clock, created_at";
/** The columns of a session record. */
export const SESSION_COLUMNS = "seq, session_id, metadata, created_at, updated_at";

/** The messages of a session's current conversation (parameters: tenant, session). */
export const CURRENT = "tenant_id = ? AND session_id = ? AND removed_clock IS NULL";
/** The messages of a session's conversation at clock `?` (see `visibleAt` in records.ts). */
export const VISIBLE_AT = "tenant_id = ? AND session_id = ? AND added_clock <= ? AND " +
  "(removed_clock IS NULL OR removed_clock > ?)";

/** `columns` qualified with a table alias (`r.seq, r.run_id, ...`). */
export function prefixed(alias: string, columns: string): string {
  return columns.split(",").map((c) => `${alias}.${c.trim()}`).join(", ");
}

/** The decoded value of a JSON TEXT column. */
export function parse(value: SQLInputValue): unknown {
  return typeof value === "string" ? JSON.parse(value) : null;
}

/** The decoders of SQLite rows. */
export const decode = rowDecoders((column) => parse(column as SQLInputValue));
