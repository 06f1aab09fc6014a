/**
 * A driver's row (column name to value) decoded into the row shapes of records.ts: the one place
 * either store reads the columns of a session, message, run or checkpoint. The drivers differ only
 * in how they hand a JSON column back (`node:sqlite` as TEXT, postgres.js already decoded), so a
 * store makes its decoders with its own reading of JSON; integers always go through `Number`
 * (postgres.js returns a `bigint` column as a string).
 */
import type { Message } from "../api/schemas.ts";
import type { CheckpointRow, MessageRow, RunRow, SessionRow } from "./records.ts";
import type { ClaimedRun } from "./types.ts";

/** A row as a driver returns it. */
// deno-lint-ignore no-explicit-any
export type DriverRow = Record<string, any>;

/** The decoders of one driver's rows. */
export interface RowDecoders {
  /** A `sessions` row. */
  session(r: DriverRow): SessionRow;
  /** A `messages` row. */
  message(r: DriverRow): MessageRow;
  /** A `runs` row. */
  run(r: DriverRow): RunRow;
  /** A `checkpoints` row. */
  checkpoint(r: DriverRow): CheckpointRow;
  /** A run a replica claimed (its `runs` columns), now `owner`'s. */
  claim(r: DriverRow, owner: string): ClaimedRun;
}

/** The row decoders of a driver that hands a JSON column back as `json` turns it into a value. */
export function rowDecoders(json: (column: unknown) => unknown): RowDecoders {
  return {
    session: (r) => ({
      seq: Number(r.seq),
      session_id: r.session_id,
      metadata: json(r.metadata),
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
    }),
    message: (r) => ({
      pos: Number(r.pos),
      message_id: r.message_id,
      session_id: r.session_id,
      run_id: r.run_id,
      role: r.role,
      content: json(r.content),
      tool_calls: json(r.tool_calls),
      tool_call_id: r.tool_call_id,
      created_at: Number(r.created_at),
    }),
    run: (r) => ({
      seq: Number(r.seq),
      run_id: r.run_id,
      session_id: r.session_id,
      tenant_id: r.tenant_id,
      status: r.status,
      attempt: Number(r.attempt ?? 1),
      parent_checkpoint_id: r.parent_checkpoint_id,
      checkpoint_id: r.checkpoint_id,
      result: json(r.result),
      interrupt_payload: json(r.interrupt_payload),
      error: json(r.error),
      model_report: json(r.model_report),
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
    }),
    checkpoint: (r) => ({
      seq: Number(r.seq),
      checkpoint_id: r.checkpoint_id,
      session_id: r.session_id,
      run_id: r.run_id,
      parent_id: r.parent_id,
      step: Number(r.step),
      state: json(r.state),
      message_clock: Number(r.message_clock),
      created_at: Number(r.created_at),
    }),
    claim: (r, owner) => ({
      tenant_id: r.tenant_id,
      run_id: r.run_id,
      session_id: r.session_id,
      owner,
      attempt: Number(r.attempt),
      checkpoint_id: r.checkpoint_id,
      request: json(r.request) ?? null,
      // SQLite says 1, PostgreSQL true.
      ...(r.start_pending ? { start_pending: true } : {}),
      ...(r.handed_over ? { handed_over: true } : {}),
    }),
  };
}

/** JSON text of a value to write into a JSON column; SQL NULL for null or undefined. */
export function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/**
 * A run's steering inbox (its JSON text) split into the messages of `messageIds`, taken, and the
 * JSON text of the others, left (null when none is).
 */
export function splitSteering(steering: string, messageIds: string[]): [Message[], string | null] {
  const ids = new Set(messageIds);
  const waiting = JSON.parse(steering) as Message[];
  const left = waiting.filter((m) => !ids.has(m.message_id));
  return [waiting.filter((m) => ids.has(m.message_id)), left.length ? JSON.stringify(left) : null];
}
