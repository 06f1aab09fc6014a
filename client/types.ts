/**
 * The client's types. Records, request bodies and run events are the server's own, inferred from
 * its zod schemas (src/api) by type-only imports: the compiler erases them, so the client's
 * JavaScript depends on nothing but `fetch`. Query parameters are written out here: their schemas
 * parse strings, so their inferred input types say nothing useful to a caller.
 */
import type { z } from "zod";
import type {
  MessageInputSchema,
  RunRequestSchema,
  RunStatus,
  SessionCreateSchema,
} from "../src/api/schemas.ts";

export type {
  Checkpoint,
  CheckpointState,
  Message,
  Page,
  Part,
  Run,
  RunError,
  RunStatus,
  Session,
  ToolCall,
  ToolDefinition,
} from "../src/api/schemas.ts";
export type { RunEvent, RunEventKind, RunEventOf } from "../src/api/events.ts";
export type { RunStep, SentRequest, ToolCallTrace } from "../src/api/run_steps.ts";
export type { FieldError, FieldRuleError } from "../src/errors.ts";

/** The body of `POST /v1/runs` and `POST /v1/runs/start`, as a caller writes it. */
export type RunRequest = z.input<typeof RunRequestSchema>;
/** A message as a caller gives it (`POST /v1/sessions/{id}/messages`, a run's `messages`). */
export type MessageInput = z.input<typeof MessageInputSchema>;
/** The body of `POST /v1/sessions`. */
export type SessionCreate = z.input<typeof SessionCreateSchema>;

/** The ids of a run started in the background (`POST /v1/runs/start`). */
export interface RunStarted {
  /** The run's id. */
  run_id: string;
  /** The session it runs in. */
  session_id: string;
}

/** Paging of every list: the page size (1–1000, default 100) and the cursor of the page. */
export interface ListQuery {
  /** Largest page size, 1–1000 (default 100). */
  per_page?: number;
  /** The `next_page` of the previous page; none for the first. */
  page?: string;
}

/** Paging and filters of a session's runs (time bounds exclusive, RFC 3339). */
export interface RunListQuery extends ListQuery {
  /** Only these run ids. */
  ids?: string[];
  /** Only runs of these sessions. */
  session_ids?: string[];
  /** Only runs with these statuses. */
  statuses?: RunStatus[];
  /** Created strictly before this time. */
  created_before?: string;
  /** Created strictly after this time. */
  created_after?: string;
  /** Updated strictly before this time. */
  updated_before?: string;
  /** Updated strictly after this time. */
  updated_after?: string;
}
