/**
 * Rows as both stores read them (timestamps as epoch milliseconds, JSON columns already decoded)
 * and their mapping to the API records, so the two dialects return identical shapes.
 */
import type {
  Checkpoint,
  Message,
  MessageInput,
  Run,
  RunError,
  RunStatus,
  Session,
} from "../api/schemas.ts";
import { modelFields, type ModelReport } from "../api/usage.ts";
import { jsonSize, PAGE_BYTES } from "./cursor.ts";
import { storeErrors } from "./errors.ts";
import type { CheckpointData, CheckpointHead } from "./types.ts";
import { newId } from "../ids.ts";

/** A session row. */
export interface SessionRow {
  seq: number;
  session_id: string;
  metadata: unknown;
  created_at: number;
  updated_at: number;
}

/** A message row (of the current conversation or of an earlier one). */
export interface MessageRow {
  /** Its place in the conversation (the list cursor). */
  pos: number;
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
  /** The attempt that owns the run (1 for the first). */
  attempt: number;
  parent_checkpoint_id: string | null;
  checkpoint_id: string | null;
  result: unknown;
  interrupt_payload: unknown;
  error: unknown;
  /** What the model reported (`ModelReport`), null until the run ends. */
  model_report?: unknown;
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
  /** Context, pending tool calls and step (the conversation is referenced, not copied). */
  state: unknown;
  /** The session's message clock at the checkpoint: its conversation is what was visible then. */
  message_clock: number;
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

/**
 * A run row's status as clients see it, in SQL (both stores): a queued run is stored `running`
 * with attempt 0 (see `toRun`).
 */
export const RUN_STATUS_SQL = "(CASE WHEN status = 'running' AND attempt = 0 THEN 'queued' " +
  "ELSE status END)";

/** A run record from its row. */
export function toRun(row: RunRow): Run {
  return {
    run_id: row.run_id,
    session_id: row.session_id,
    tenant_id: row.tenant_id,
    // A queued run is stored `running` with attempt 0 (it holds its session like a running one).
    status: (row.status === "running" && row.attempt === 0 ? "queued" : row.status) as RunStatus,
    attempt: row.attempt,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    parent_checkpoint_id: row.parent_checkpoint_id,
    checkpoint_id: row.checkpoint_id,
    result: row.result ?? null,
    interrupt_payload: (row.interrupt_payload ?? null) as Run["interrupt_payload"],
    error: (row.error ?? null) as RunError | null,
    ...modelFields(row.model_report as ModelReport | null | undefined),
  };
}

/** The state of a checkpoint row without its conversation. */
export function checkpointData(row: CheckpointRow): CheckpointData {
  return row.state as CheckpointData;
}

/** A checkpoint record from its row and the conversation visible at its clock. */
export function toCheckpoint(row: CheckpointRow, messages: Message[]): Checkpoint {
  return {
    checkpoint_id: row.checkpoint_id,
    session_id: row.session_id,
    run_id: row.run_id,
    parent_id: row.parent_id,
    step: row.step,
    created_at: iso(row.created_at),
    state: { messages, ...checkpointData(row) },
  };
}

/** The head of a checkpoint row (what a run starts from). */
export function toCheckpointHead(row: CheckpointRow): CheckpointHead {
  return {
    checkpoint_id: row.checkpoint_id,
    run_id: row.run_id,
    parent_id: row.parent_id,
    state: checkpointData(row),
  };
}

/** A message row read for a page of checkpoints, with its clocks. */
export interface ClockedMessage {
  message: Message;
  added_clock: number;
  removed_clock: number | null;
}

/**
 * Messages a page of checkpoints carries at most, over all its checkpoints' conversations
 * (docs/api.md#checkpoints): each conversation is a copy in the response, so a page of a long
 * session's checkpoints would otherwise hold the square of its length. `PAGE_BYTES` bounds the
 * same copies in bytes.
 */
export const CHECKPOINT_PAGE_MESSAGES = 10_000;

/**
 * The checkpoints of `rows` (in order) with their conversations picked from `candidates` (every
 * message visible at one of their clocks, in order), as many as fit `budget` messages and
 * `PAGE_BYTES` of messages in all, always at least one: the first rows' (`cutPage` makes the page
 * of them).
 */
export function checkpointsOf(
  rows: CheckpointRow[],
  candidates: ClockedMessage[],
  budget = Infinity,
): Checkpoint[] {
  const items: Checkpoint[] = [];
  // Each message measured once, however many conversations of the page hold it.
  const sizes = budget === Infinity ? null : candidates.map((c) => jsonSize(c.message));
  let total = 0;
  let bytes = 0;
  for (const row of rows) {
    const messages: Message[] = [];
    candidates.forEach((c, i) => {
      if (!visibleAt(c, row.message_clock)) return;
      messages.push(c.message);
      if (sizes) bytes += sizes[i];
    });
    total += messages.length;
    if (items.length > 0 && (total > budget || bytes > PAGE_BYTES)) break;
    items.push(toCheckpoint(row, messages));
  }
  return items;
}

/** A message row's clocks and size (the length of its JSON columns), read before its content. */
export interface SizedRow {
  added_clock: number;
  removed_clock: number | null;
  bytes: number;
}

/**
 * How many of `rows` (in order) a page of checkpoints holds, as `checkpointsOf` counts (`budget`
 * messages, `PAGE_BYTES` of them, at least one), known from the rows' sizes before their content
 * is read: a page then reads only the conversations it returns, not its whole clock range.
 */
export function checkpointsThatFit(
  rows: CheckpointRow[],
  sized: SizedRow[],
  budget: number,
): number {
  let total = 0;
  let bytes = 0;
  let fit = 0;
  for (const row of rows) {
    for (const m of sized) {
      if (!visibleAt(m, row.message_clock)) continue;
      total++;
      bytes += m.bytes;
    }
    if (fit > 0 && (total > budget || bytes > PAGE_BYTES)) break;
    fit++;
  }
  return fit;
}

/**
 * Whether a message row is part of the conversation at clock `mark`: added by then and not yet
 * removed. Both stores select with the same condition in SQL; this one serves list pages, which
 * read the rows of several checkpoints at once.
 */
export function visibleAt(
  row: { added_clock: number; removed_clock: number | null },
  mark: number,
): boolean {
  return row.added_clock <= mark && (row.removed_clock === null || row.removed_clock > mark);
}

/**
 * Message records for new inputs: generates missing ids, stamps the session, run and time, and
 * rejects an id given twice in the batch (409005) before the database would.
 */
export function newMessages(
  sessionId: string,
  inputs: MessageInput[],
  runId: string | null,
  now: number,
): Message[] {
  const seen = new Set<string>();
  const at = iso(now);
  return inputs.map((input) => {
    const id = input.message_id ?? newId();
    if (seen.has(id)) throw storeErrors.messageExists(id);
    seen.add(id);
    const message: Message = {
      message_id: id,
      session_id: sessionId,
      run_id: runId,
      role: input.role,
      content: input.content,
      created_at: at,
    };
    if (input.tool_calls !== undefined && input.tool_calls !== null) {
      message.tool_calls = input.tool_calls;
    }
    if (input.tool_call_id !== undefined && input.tool_call_id !== null) {
      message.tool_call_id = input.tool_call_id;
    }
    return message;
  });
}

/** The columns of a message record as both stores write them (times as epoch milliseconds). */
export interface MessageValues {
  message_id: string;
  run_id: string | null;
  role: string;
  content: unknown;
  tool_calls: unknown;
  tool_call_id: string | null;
  created_at: number;
}

/** A message record as column values. */
export function messageValues(m: Message): MessageValues {
  return {
    message_id: m.message_id,
    run_id: m.run_id ?? null,
    role: m.role,
    content: m.content,
    tool_calls: m.tool_calls ?? null,
    tool_call_id: m.tool_call_id ?? null,
    created_at: Date.parse(m.created_at),
  };
}

/**
 * The start of the error of a run the sweeper failed: its replica was lost and it had used all
 * its attempts (the SQL of both stores appends the last owner and a closing parenthesis).
 */
export function replicaLostMessagePrefix(): string {
  return "the replica executing this run stopped heartbeating and the run has no attempts left " +
    "(runtime.runs.max_attempts; last owner ";
}

/** The `error` of a run the sweeper failed (the SQL of both stores builds the same). */
export function replicaLostError(owner: string): RunError {
  return { code: "replica_lost", message: `${replicaLostMessagePrefix()}${owner})` };
}
