/**
 * Wire schemas of the native `/v1` API: request bodies, query strings and records. One zod schema
 * per shape gives validation, the TypeScript type and the OpenAPI document (`meta({ id })` names
 * its component there).
 */
import { z } from "zod";
import { InferenceParamsSchema, RetrySchema } from "../config/schema/agent.ts";

/** Identifier chosen by a client (session, run, message): printable, no slashes, bounded. */
export const ClientIdSchema = z.string().min(1).max(128).regex(
  /^[A-Za-z0-9][A-Za-z0-9._:\-]*$/,
  "must start with a letter or digit and hold only letters, digits, '.', '_', ':' and '-'",
).meta({ id: "ClientId", format: "client-id" });

/** A text part: the spec's shown content part type. */
export const TextPartSchema = z.object({ type: z.literal("text"), value: z.string() }).strict()
  .meta({ id: "TextPart" });
/** A structured JSON part (our addition; A2A data parts map onto it). */
export const DataPartSchema = z.object({ type: z.literal("data"), value: z.unknown() }).strict()
  .meta({ id: "DataPart" });
/** A content part of a message. */
export const PartSchema = z.discriminatedUnion("type", [TextPartSchema, DataPartSchema]).meta({
  id: "Part",
});

/** A tool call requested by the model, as stored on an assistant message. */
export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
}).strict().meta({ id: "ToolCall" });

/** Message roles the native API accepts and returns. */
export const RoleSchema = z.enum(["user", "assistant", "system", "tool"]).meta({ id: "Role" });

/** Message input (spec: role + content parts), with our optional fields for tool traffic. */
export const MessageInputSchema = z.object({
  message_id: ClientIdSchema.optional(),
  role: RoleSchema,
  content: z.array(PartSchema),
  /** Assistant messages only: the tool calls the assistant made. */
  tool_calls: z.array(ToolCallSchema).optional(),
  /** Tool messages only: the call this message answers. */
  tool_call_id: z.string().min(1).optional(),
}).strict().meta({ id: "MessageInput" });

/** A stored message. */
export const MessageSchema = z.object({
  message_id: z.string(),
  session_id: z.string(),
  run_id: z.string().nullable(),
  role: RoleSchema,
  content: z.array(PartSchema),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  created_at: z.string(),
}).meta({ id: "Message" });

/** A session record. */
export const SessionSchema = z.object({
  session_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  metadata: z.record(z.string(), z.unknown()),
}).meta({ id: "Session" });

/** Body of `POST /v1/sessions`. */
export const SessionCreateSchema = z.object({
  session_id: ClientIdSchema.nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
}).strict().meta({ id: "SessionCreate" });

/** Run statuses of the spec. */
export const RunStatusSchema = z.enum([
  "running",
  "completed",
  "failed",
  "interrupted",
  "cancelled",
]).meta({ id: "RunStatus" });

/** Error payload of a failed or interrupted run. */
export const RunErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  provider: z.string().optional(),
  model: z.string().optional(),
  attempts: z.number().int().optional(),
}).meta({ id: "RunError" });

/** A run record. */
export const RunSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  tenant_id: z.string(),
  status: RunStatusSchema,
  created_at: z.string(),
  updated_at: z.string(),
  /** The checkpoint the run started from (null for a session's first run). */
  parent_checkpoint_id: z.string().nullable(),
  /** The run's latest checkpoint. */
  checkpoint_id: z.string().nullable(),
  result: z.unknown().nullable(),
  interrupt_payload: z.record(z.string(), z.unknown()).nullable(),
  error: RunErrorSchema.nullable(),
}).meta({ id: "Run" });

/** The state a checkpoint saves. */
export const CheckpointStateSchema = z.object({
  messages: z.array(MessageSchema),
  context: z.record(z.string(), z.unknown()).nullable(),
  pending_tool_calls: z.array(z.record(z.string(), z.unknown())),
  step: z.number().int(),
}).meta({ id: "CheckpointState" });

/** A checkpoint record. */
export const CheckpointSchema = z.object({
  checkpoint_id: z.string(),
  session_id: z.string(),
  run_id: z.string().nullable(),
  parent_id: z.string().nullable(),
  step: z.number().int(),
  created_at: z.string(),
  state: CheckpointStateSchema,
}).meta({ id: "Checkpoint" });

/** The spec's ModelConfigOverride. */
export const ModelConfigOverrideSchema = z.object({
  provider: z.string().min(1).nullish(),
  model: z.string().min(1).nullish(),
  inference_params: InferenceParamsSchema.nullish(),
}).strict().meta({ id: "ModelConfigOverride" });

/** The spec's ModelConfig. */
export const ModelConfigSchema = z.object({
  override: ModelConfigOverrideSchema.nullish(),
  timeout: z.number().int().positive().max(3_600_000).nullish(),
  retry: RetrySchema.nullish(),
}).strict().meta({ id: "ModelConfig" });

/** The spec's CapabilityOverride. */
export const CapabilityOverrideSchema = z.discriminatedUnion("strategy", [
  z.object({ strategy: z.literal("inherit") }).strict(),
  z.object({ strategy: z.literal("extend"), capabilities: z.array(z.string().min(1)) }).strict(),
  z.object({ strategy: z.literal("replace"), capabilities: z.array(z.string().min(1)) }).strict(),
]).meta({ id: "CapabilityOverride" });

/** The spec's ContextVar. */
export const ContextVarSchema = z.object({
  description: z.string(),
  value: z.string(),
}).strict().meta({ id: "ContextVar" });

/** The spec's ToolDefinition (a client-defined tool). */
export const ToolDefinitionSchema = z.object({
  name: z.string().min(1).max(128)
    .regex(/^[A-Za-z0-9_\-]+$/, "must hold only letters, digits, '_' and '-'")
    .meta({ format: "tool-name" }),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
}).strict().meta({ id: "ToolDefinition" });

/** Schema of a `resume_payload` (the request field is an opaque object; the engine owns it). */
export const ResumePayloadSchema = z.object({
  tool_results: z.array(
    z.object({
      tool_call_id: z.string().min(1),
      result: z.unknown(),
      is_error: z.boolean().optional(),
    }).strict(),
  ).optional(),
  approvals: z.array(
    z.object({
      tool_call_id: z.string().min(1),
      approved: z.boolean(),
      reason: z.string().optional(),
    }).strict(),
  ).optional(),
}).strict();

/** A validated `resume_payload`. */
export type ResumePayload = z.infer<typeof ResumePayloadSchema>;

/** The run request body of `POST /v1/runs` and `POST /v1/runs/start`. */
export const RunRequestSchema = z.object({
  session_id: ClientIdSchema.nullish(),
  run_id: ClientIdSchema.nullish(),
  checkpoint_id: z.string().min(1).nullish(),
  resume_payload: z.record(z.string(), z.unknown()).nullish(),
  model: ModelConfigSchema.nullish(),
  capability_override: CapabilityOverrideSchema.nullish(),
  messages: z.array(MessageInputSchema).min(1),
  context_vars: z.array(ContextVarSchema).nullish(),
  context: z.record(z.string(), z.unknown()).nullish(),
  tools: z.array(ToolDefinitionSchema).nullish(),
  on_disconnect: z.enum(["cancel", "continue"]).nullish().describe(
    "What closing the response of `POST /v1/runs` does: `cancel` the run (the spec's rule, the " +
      "default unless `http_server.on_disconnect` says otherwise) or let it `continue`, so the " +
      "client can resume its stream from `GET /v1/runs/{run_id}/events` with `Last-Event-ID`.",
  ),
}).strict().meta({ id: "RunRequest" });

/** An RFC 6902 JSON Patch operation (spec: PatchOperation), discriminated by `op`. */
export const PatchOperationSchema = z.discriminatedUnion("op", [
  z.object({
    op: z.enum(["add", "replace", "test"]),
    path: z.string().describe("JSON Pointer"),
    value: z.unknown(),
  }),
  z.object({ op: z.literal("remove"), path: z.string().describe("JSON Pointer") }),
  z.object({
    op: z.enum(["move", "copy"]),
    from: z.string().describe("JSON Pointer"),
    path: z.string().describe("JSON Pointer"),
  }),
]).meta({ id: "PatchOperation" });

/** An RFC 6902 JSON Patch operation. */
export type PatchOperation = z.infer<typeof PatchOperationSchema>;

/** Response of `POST /v1/runs/start`. */
export const RunStartedSchema = z.object({ run_id: z.string(), session_id: z.string() }).meta({
  id: "RunStarted",
});

/** Page size bounds of every list endpoint (spec: default 100, 1 to 1000). */
export const PER_PAGE = { min: 1, max: 1000, default: 100 } as const;

/** A query value given once, or the last of its repeats (`?page=a&page=b` reads `b`). */
const lastValue = (v: unknown) => Array.isArray(v) ? v[v.length - 1] : v;

/**
 * An integer query parameter: its text read as a number when it is one (anything else stays
 * text, which `schema` refuses as the wrong type).
 */
const queryNumber = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => {
    const text = lastValue(v);
    return typeof text === "string" && /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text;
  }, schema);

/** `per_page`: an integer from 1 to 1000, 100 when absent. */
const PerPageSchema = queryNumber(
  z.number().int().min(PER_PAGE.min).max(PER_PAGE.max).default(PER_PAGE.default),
).meta({
  type: "integer",
  minimum: PER_PAGE.min,
  maximum: PER_PAGE.max,
  default: PER_PAGE.default,
  description: "Largest page size, 1–1000.",
});

/** `page`: the opaque cursor; none is the first page. */
const PageCursorSchema = z.preprocess(lastValue, z.string().optional())
  .transform((v) => v ?? null)
  .meta({
    type: "string",
    description: "Opaque cursor: the `next_page` of the previous response.",
  });

/**
 * A query string's parameters. Unknown ones are refused, so a typo is a 422 rather than a silent
 * no-op; the message lists the known ones.
 */
export const queryObject = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? (Object.keys(shape).length > 0
          ? `unknown query parameter; known: ${Object.keys(shape)}`
          : "unknown query parameter; this endpoint takes none")
        : undefined,
  });

/** The query of an endpoint that takes no parameters: any one is refused as unknown. */
export const NoQuerySchema = queryObject({});

const PAGE_SHAPE = { per_page: PerPageSchema, page: PageCursorSchema };

/** Paging query parameters of every list endpoint. */
export const PageQuerySchema = queryObject(PAGE_SHAPE);

/** Query values of one array parameter: repeated (`ids=a&ids=b`) or comma-separated (`ids=a,b`). */
const queryList = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) =>
      v === undefined || v === null ? v : (Array.isArray(v) ? v : [v])
        .flatMap((s) => String(s).split(",")).map((s) => s.trim()).filter((s) => s !== ""),
    z.array(item),
  );

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 timestamp in a query string (`2026-11-21T10:00:00Z`, fractions and offsets too) of
 * a real date: one `format` rule for both.
 */
const QueryTimestampSchema = z.preprocess(
  lastValue,
  z.string().refine((v) => RFC_3339.test(v) && Number.isFinite(Date.parse(v.replace(" ", "T"))), {
    message: "must be an RFC 3339 timestamp, e.g. 2026-11-21T10:00:00Z",
    params: { rule: "format", format: "date-time" },
  }).meta({ format: "date-time", pattern: RFC_3339.source }),
);

/** Query of `GET /v1/sessions/{session_id}/runs`: paging and filters (time bounds exclusive). */
export const RunListQuerySchema = queryObject({
  ...PAGE_SHAPE,
  ids: queryList(z.string()).optional()
    .describe("Only these run ids (repeat the parameter or separate values with commas)."),
  session_ids: queryList(z.string()).optional()
    .describe("Only runs of these sessions (repeated or comma-separated)."),
  statuses: queryList(RunStatusSchema).optional()
    .describe("Only runs with these statuses (repeated or comma-separated)."),
  created_before: QueryTimestampSchema.optional()
    .describe("Created strictly before this RFC 3339 time."),
  created_after: QueryTimestampSchema.optional()
    .describe("Created strictly after this RFC 3339 time."),
  updated_before: QueryTimestampSchema.optional()
    .describe("Updated strictly before this RFC 3339 time."),
  updated_after: QueryTimestampSchema.optional()
    .describe("Updated strictly after this RFC 3339 time."),
});

/** List envelope of the spec. */
export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), count: z.number().int(), next_page: z.string().nullable() });

/** A page of sessions. */
export const SessionListSchema = listEnvelope(SessionSchema).meta({ id: "SessionList" });
/** A page of messages. */
export const MessageListSchema = listEnvelope(MessageSchema).meta({ id: "MessageList" });
/** A page of checkpoints. */
export const CheckpointListSchema = listEnvelope(CheckpointSchema).meta({ id: "CheckpointList" });
/** A page of runs. */
export const RunListSchema = listEnvelope(RunSchema).meta({ id: "RunList" });

/** Generic error body. */
export const ErrorBodySchema = z.object({ code: z.number().int(), message: z.string() }).meta({
  id: "ErrorBody",
});
/** Validation error body. */
export const ValidationErrorBodySchema = z.object({
  code: z.number().int(),
  fields: z.array(z.object({
    field: z.string(),
    errors: z.array(z.object({
      code: z.string(),
      message: z.string().optional(),
      params: z.record(z.string(), z.unknown()).optional(),
    })),
  })),
}).meta({ id: "ValidationErrorBody" });

/** A message part. */
export type Part = z.infer<typeof PartSchema>;
/** A tool call on an assistant message. */
export type ToolCall = z.infer<typeof ToolCallSchema>;
/** Message input. */
export type MessageInput = z.infer<typeof MessageInputSchema>;
/** A stored message. */
export type Message = z.infer<typeof MessageSchema>;
/** A session record. */
export type Session = z.infer<typeof SessionSchema>;
/** A run status. */
export type RunStatus = z.infer<typeof RunStatusSchema>;
/** A run's error payload. */
export type RunError = z.infer<typeof RunErrorSchema>;
/** A run record. */
export type Run = z.infer<typeof RunSchema>;
/** What a checkpoint saves. */
export type CheckpointState = z.infer<typeof CheckpointStateSchema>;
/** A checkpoint record. */
export type Checkpoint = z.infer<typeof CheckpointSchema>;
/** Per-run model configuration. */
export type ModelConfig = z.infer<typeof ModelConfigSchema>;
/** Per-run capability override. */
export type CapabilityOverride = z.infer<typeof CapabilityOverrideSchema>;
/** A context variable. */
export type ContextVar = z.infer<typeof ContextVarSchema>;
/** A client-defined tool. */
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;
/** A validated run request. */
export type RunRequest = z.infer<typeof RunRequestSchema>;
/** A page of records. */
export interface Page<T> {
  items: T[];
  count: number;
  next_page: string | null;
}
