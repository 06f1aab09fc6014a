/**
 * Rows as both stores read them (timestamps as epoch milliseconds, JSON columns already decoded)
 * and their mapping to the API records, so the two dialects return identical shapes.
 */
import type {
  Checkpoint,
  CheckpointState,
  Message,
  MessageInput,
  Run,
  RunError,
  RunStatus,
  Session,
} from "../api/schemas.ts";
import { errors } from "./errors.ts";

/** A session row. */
export interface SessionRow {
  seq: number;
  session_id: string;
  metadata: unknown;
  created_at: number;
  updated_at: number;
}

/** A message row. */
export interface MessageRow {
  seq: number;
  message_id: string;
  session_id: string;
  run_id: string | null;
  role: string;
  content: unknown;
  tool_calls: unknown;
  tool_call_id: string | null;
  created_at: number;
}

/** A run row (without `owner` and `heartbeat_at`, which the record does not show). */
export interface RunRow {
  seq: number;
  run_id: string;
  session_id: string;
  tenant_id: string;
  status: string;
  parent_checkpoint_id: string | null;
  checkpoint_id: string | null;
  result: unknown;
  interrupt_payload: unknown;
  error: unknown;
  created_at: number;
  updated_at: number;
}

/** A checkpoint row. */
export interface CheckpointRow {
  seq: number;
  checkpoint_id: string;
  session_id: string;
  run_id: string | null;
  parent_id: string | null;
  step: number;
  state: unknown;
  created_at: number;
}

/** Epoch milliseconds as the RFC 3339 string every record carries. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A session record from its row. */
export function toSession(row: SessionRow): Session {
  return {
    session_id: row.session_id,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
  };
}

/** A message record from its row; `tool_calls` and `tool_call_id` appear only when stored. */
export function toMessage(row: MessageRow): Message {
  const message: Message = {
    message_id: row.message_id,
    session_id: row.session_id,
    run_id: row.run_id,
    role: row.role as Message["role"],
    content: row.content as Message["content"],
    created_at: iso(row.created_at),
  };
  if (row.tool_calls !== null && row.tool_calls !== undefined) {
    message.tool_calls = row.tool_calls as Message["tool_calls"];
  }
  if (row.tool_call_id !== null && row.tool_call_id !== undefined) {
    message.tool_call_id = row.tool_call_id;
  }
  return message;
}

/** A run record from its row. */
export function toRun(row: RunRow): Run {
  return {
    run_id: row.run_id,
    session_id: row.session_id,
    tenant_id: row.tenant_id,
    status: row.status as RunStatus,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    parent_checkpoint_id: row.parent_checkpoint_id,
    checkpoint_id: row.checkpoint_id,
    result: row.result ?? null,
    interrupt_payload: (row.interrupt_payload ?? null) as Run["interrupt_payload"],
    error: (row.error ?? null) as RunError | null,
  };
}

/** A checkpoint record from its row. */
export function toCheckpoint(row: CheckpointRow): Checkpoint {
  return {
    checkpoint_id: row.checkpoint_id,
    session_id: row.session_id,
    run_id: row.run_id,
    parent_id: row.parent_id,
    step: row.step,
    created_at: iso(row.created_at),
    state: row.state as CheckpointState,
  };
}

/**
 * Turns appended inputs into message rows: generates missing ids and rejects an id given twice
 * in the batch (409005) before the database would.
 */
export function newMessageRows(
  sessionId: string,
  inputs: MessageInput[],
  runId: string | null,
  now: number,
): Omit<MessageRow, "seq">[] {
  const seen = new Set<string>();
  return inputs.map((input) => {
    const id = input.message_id ?? crypto.randomUUID();
    if (seen.has(id)) throw errors.messageExists(id);
    seen.add(id);
    return {
      message_id: id,
      session_id: sessionId,
      run_id: runId,
      role: input.role,
      content: input.content,
      tool_calls: input.tool_calls ?? null,
      tool_call_id: input.tool_call_id ?? null,
      created_at: now,
    };
  });
}

/**
 * Turns the messages given to `replaceMessages` back into rows, keeping their ids, run ids and
 * timestamps; a message id listed twice is 409005.
 */
export function restoredMessageRows(
  sessionId: string,
  messages: Message[],
  now: number,
): Omit<MessageRow, "seq">[] {
  const seen = new Set<string>();
  return messages.map((m) => {
    if (seen.has(m.message_id)) throw errors.messageExists(m.message_id);
    seen.add(m.message_id);
    const created = Date.parse(m.created_at);
    return {
      message_id: m.message_id,
      session_id: sessionId,
      run_id: m.run_id ?? null,
      role: m.role,
      content: m.content,
      tool_calls: m.tool_calls ?? null,
      tool_call_id: m.tool_call_id ?? null,
      created_at: Number.isNaN(created) ? now : created,
    };
  });
}

/** The error a swept run carries: its replica stopped heartbeating. */
export function replicaLostMessagePrefix(): string {
  return "the replica executing this run stopped heartbeating (owner ";
}

/** The `error` of a run the sweeper interrupted (the SQL of both stores builds the same). */
export function replicaLostError(owner: string): RunError {
  return { code: "replica_lost", message: `${replicaLostMessagePrefix()}${owner})` };
}
