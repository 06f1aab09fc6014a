// Over 400 lines: one vocabulary of small wire schemas that refer to each other, read as a whole.
/**
 * Wire schemas of the native `/v1` API: request bodies, query strings and records. One zod schema
 * per shape gives validation, the TypeScript type and the OpenAPI document (`meta({ id })` names
 * its component there).
 */
import { z } from "zod";
import { InferenceParamsSchema, RetrySchema } from "../config/schema/agent.ts";
import { FinishReasonSchema, ModelStepReportSchema, UsageSchema } from "./usage.ts";

/** Identifier chosen by a client (session, run, message): printable, no slashes, bounded. */
export const ClientIdSchema = z.string().min(1).max(128).regex(
  /^[A-Za-z0-9][A-Za-z0-9._:\-]*$/,
  "must start with a letter or digit and hold only letters, digits, '.', '_', ':' and '-'",
).meta({
  id: "ClientId",
  format: "client-id",
  description: "An id a client may choose: 1–128 of `A-Z a-z 0-9 . _ : -`, starting with a " +
    "letter or digit.",
});

/** A text part: the spec's shown content part type. */
export const TextPartSchema = z.object({
  type: z.literal("text").describe("A text part."),
  value: z.string().describe("The text."),
}).strict().meta({ id: "TextPart", description: "A part of a message's content: text." });
/** A structured JSON part (our addition; A2A data parts map onto it). */
export const DataPartSchema = z.object({
  type: z.literal("data").describe("A structured JSON part."),
  value: z.unknown().describe("Any JSON value (a tool result, an A2A data part)."),
}).strict().meta({ id: "DataPart", description: "A part of a message's content: JSON data." });
/** What a provider attached to a part, by provider (a signature, an encrypted value). */
export const ProviderMetadataSchema = z.record(z.string(), z.record(z.string(), z.unknown()))
  .meta({
    id: "ProviderMetadata",
    description:
      "What the provider attached to a part, by provider (`anthropic`, `google`, ...): " +
      "signatures and encrypted values the next request sends back as they were received.",
  });
/** A reasoning part of an assistant message (our addition: thinking, thought summaries). */
export const ReasoningPartSchema = z.object({
  type: z.literal("reasoning").describe("The model's reasoning before its answer."),
  value: z.string().describe("The reasoning text (empty when the provider sent it encrypted)."),
  provider_metadata: ProviderMetadataSchema.optional().describe(
    "The provider's signature or encrypted value of this reasoning, sent back with it.",
  ),
}).strict().meta({
  id: "ReasoningPart",
  description: "A part of an assistant message's content: the model's reasoning.",
});
/** The fields of a source the model used (a search result, a citation); its event has them too. */
export const SourceFieldsSchema = z.object({
  source_id: z.string().describe(
    "The source's id in the model's answer (the provider's, or the cited URL).",
  ),
  source_type: z.enum(["url", "document"]).describe("A web page (`url`) or a document."),
  url: z.string().optional().describe("The page's URL (`url` sources)."),
  title: z.string().optional().describe("Its title, when the provider gave one."),
  media_type: z.string().optional().describe("The document's media type (`document` sources)."),
  filename: z.string().optional().describe("The document's file name, when it has one."),
  cited_text: z.string().optional().describe(
    "A citation: the passage of the source the answer cites (absent on a plain source).",
  ),
});
/** A source part of an assistant message (our addition: web search results, citations). */
export const SourcePartSchema = z.object({
  type: z.literal("source").describe("A source the model used, or a citation of one."),
  ...SourceFieldsSchema.shape,
}).strict().meta({
  id: "SourcePart",
  description: "A part of an assistant message's content: a source the answer used or cites " +
    "(never sent back to the model).",
});
/** A content part of a message. */
export const PartSchema = z.discriminatedUnion("type", [
  TextPartSchema,
  DataPartSchema,
  ReasoningPartSchema,
  SourcePartSchema,
]).meta({
  id: "Part",
  description: "A content part of a message, by `type`.",
});

/** A tool call requested by the model, as stored on an assistant message. */
export const ToolCallSchema = z.object({
  id: z.string().min(1).describe(
    "The call's id, unique in the session (a `tool` message answers it).",
  ),
  name: z.string().min(1).describe("The tool called."),
  arguments: z.record(z.string(), z.unknown()).describe("The call's arguments (a JSON object)."),
  provider_metadata: ProviderMetadataSchema.optional().describe(
    "What the provider attached to the call (Gemini's thought signature), sent back with it.",
  ),
  provider_executed: z.literal(true).optional().describe(
    "The provider ran this call itself (a web search, an MCP connector): agentd never runs it; " +
      "the `tool` message after it holds the provider's result.",
  ),
}).strict().meta({ id: "ToolCall", description: "A tool call the assistant made." });

/** Message roles the native API accepts and returns. */
export const RoleSchema = z.enum(["user", "assistant", "system", "tool"]).meta({
  id: "Role",
  description: "Who wrote a message.",
});

/** Message input (spec: role + content parts), with our optional fields for tool traffic. */
export const MessageInputSchema = z.object({
  message_id: ClientIdSchema.optional().describe(
    "The message's id, unique in the session; generated when absent.",
  ),
  role: RoleSchema.describe("Who wrote it."),
  content: z.array(PartSchema).describe("Its content parts, in order."),
  tool_calls: z.array(ToolCallSchema).optional().describe(
    "Assistant messages only: the tool calls the assistant made.",
  ),
  tool_call_id: z.string().min(1).optional().describe(
    "Tool messages only: the id of the call this message answers.",
  ),
}).strict().meta({ id: "MessageInput", description: "A message as a request gives it." });

/** A stored message. */
export const MessageSchema = z.object({
  message_id: z.string().describe("The message's id, unique in the session."),
  session_id: z.string().describe("The session it belongs to."),
  run_id: z.string().nullable().describe(
    "The run that wrote it (null for a message written through the messages API).",
  ),
  role: RoleSchema.describe("Who wrote it."),
  content: z.array(PartSchema).describe("Its content parts, in order."),
  tool_calls: z.array(ToolCallSchema).optional().describe(
    "Assistant messages only: the tool calls the assistant made.",
  ),
  tool_call_id: z.string().optional().describe(
    "Tool messages only: the id of the call this message answers.",
  ),
  created_at: z.string().describe("When it was stored (RFC 3339)."),
}).meta({ id: "Message", description: "A message of a session's conversation." });

/** A session record. */
export const SessionSchema = z.object({
  session_id: z.string().describe("The session's id."),
  created_at: z.string().describe("When it was created (RFC 3339)."),
  updated_at: z.string().describe("When a run or a message last changed it (RFC 3339)."),
  metadata: z.record(z.string(), z.unknown()).describe("What its creator attached to it."),
}).meta({ id: "Session", description: "A session: the durable conversation boundary." });

/** A session as `GET /v1/sessions/{session_id}` shows it: with its runs' totals. */
export const SessionReadSchema = SessionSchema.extend({
  usage: UsageSchema.nullable().describe(
    "The tokens the session's runs used: the sum of their model steps' usage (null before any " +
      "run reported a step).",
  ),
  cost: z.number().nullable().describe(
    "What the session's runs cost: the sum of their model steps' cost (null when no step had a " +
      "price in the manifest).",
  ),
}).meta({ id: "SessionRead", description: "A session with the totals of its runs." });

/** Body of `POST /v1/sessions`. */
export const SessionCreateSchema = z.object({
  session_id: ClientIdSchema.nullish().describe("The new session's id; generated when absent."),
  metadata: z.record(z.string(), z.unknown()).nullish().describe(
    "Any JSON object to keep with the session (`{}` when absent).",
  ),
}).strict().meta({ id: "SessionCreate", description: "The body of `POST /v1/sessions`." });

/** Run statuses of the spec. */
export const RunStatusSchema = z.enum([
  "queued",
  "running",
  "completed",
  "failed",
  "interrupted",
  "cancelled",
]).meta({
  id: "RunStatus",
  description: "Where a run is: `queued` (an extension: waiting for a free slot, only when " +
    "`runtime.runs.max_concurrent` is reached), `running`, or how it ended (`interrupted` runs " +
    "can be resumed).",
});

/** Error payload of a failed or interrupted run. */
export const RunErrorSchema = z.object({
  code: z.string().describe(
    "What failed, as a stable code (`model_http_500`, `model_timeout`, ...).",
  ),
  message: z.string().describe("What failed, for a person."),
  provider: z.string().optional().describe("The model provider, when the model failed."),
  model: z.string().optional().describe("The model, when the model failed."),
  attempts: z.number().int().optional().describe("How many attempts the model call made."),
}).meta({ id: "RunError", description: "Why a run failed or stopped." });

/** A run record. */
export const RunSchema = z.object({
  run_id: z.string().describe("The run's id."),
  session_id: z.string().describe("The session it runs in."),
  tenant_id: z.string().describe("The tenant it belongs to."),
  status: RunStatusSchema.describe("Where the run is."),
  attempt: z.number().int().describe(
    "Which attempt executes (or executed) the run: 1, then one more each time another replica " +
      "resumed it after its replica was lost or handed it over (extension).",
  ),
  created_at: z.string().describe("When it started (RFC 3339)."),
  updated_at: z.string().describe("When its record last changed (RFC 3339)."),
  parent_checkpoint_id: z.string().nullable().describe(
    "The checkpoint the run started from (null for a session's first run).",
  ),
  checkpoint_id: z.string().nullable().describe(
    "The run's latest checkpoint (null before its first step ends).",
  ),
  result: z.unknown().describe(
    "A completed run's result, `{ text, context }`: its last answer and the state; else null.",
  ),
  interrupt_payload: z.record(z.string(), z.unknown()).nullable().describe(
    "What an `interrupted` run waits for (`reason`, `pending` tool calls; docs/engine.md); " +
      "else null.",
  ),
  error: RunErrorSchema.nullable().describe("Why a `failed` run failed; else null."),
  usage: UsageSchema.nullable().describe(
    "The tokens of all the run's model steps (null before the run ends or without a model step).",
  ),
  finish_reason: FinishReasonSchema.nullable().describe(
    "Why the model stopped in the run's last model step (null without one).",
  ),
  model_steps: z.array(ModelStepReportSchema).describe(
    "Each model step's finish reason and tokens, in order (empty until the run ends).",
  ),
  warnings: z.array(z.string()).describe(
    "The provider's warnings about the run's requests (unsupported settings), each once.",
  ),
  cost: z.number().nullable().describe(
    "What the run's model steps cost at the model's price in the manifest (`agent.model.prices`); " +
      "null when the model has no price.",
  ),
}).meta({ id: "Run", description: "A run: one execution of the agent graph in a session." });

/** The state a checkpoint saves. */
export const CheckpointStateSchema = z.object({
  messages: z.array(MessageSchema).describe("The conversation as of the checkpoint."),
  context: z.record(z.string(), z.unknown()).nullable().describe(
    "The agent state (null before anything set it).",
  ),
  pending_tool_calls: z.array(z.record(z.string(), z.unknown())).describe(
    "Tool calls that wait for a client or an approval at this checkpoint.",
  ),
  step: z.number().int().describe("The step of the run that saved it."),
}).meta({ id: "CheckpointState", description: "The state a checkpoint saves." });

/** A checkpoint record. */
export const CheckpointSchema = z.object({
  checkpoint_id: z.string().describe("The checkpoint's id."),
  session_id: z.string().describe("The session it belongs to."),
  run_id: z.string().nullable().describe("The run that saved it."),
  parent_id: z.string().nullable().describe("The checkpoint before it (null for the first)."),
  step: z.number().int().describe("The step of the run that saved it."),
  created_at: z.string().describe("When it was saved (RFC 3339)."),
  state: CheckpointStateSchema.describe("What it saves."),
}).meta({ id: "Checkpoint", description: "A saved state of a session, from which runs start." });

/** The spec's ModelConfigOverride. */
export const ModelConfigOverrideSchema = z.object({
  provider: z.string().min(1).nullish().describe(
    "The model provider (`openai`, `anthropic`, `google`, `openai-compatible`, `echo`); the " +
      "agent's when absent.",
  ),
  model: z.string().min(1).nullish().describe(
    "The model (one of the manifest's `model.models` when it lists any); the agent's when absent.",
  ),
  inference_params: InferenceParamsSchema.nullish().describe(
    "Inference parameters, merged over the agent's.",
  ),
}).strict().meta({ id: "ModelConfigOverride", description: "Which model a run uses." });

/** The spec's ModelConfig. */
export const ModelConfigSchema = z.object({
  override: ModelConfigOverrideSchema.nullish().describe("Another model for this run."),
  timeout: z.number().int().positive().max(3_600_000).nullish().describe(
    "Milliseconds allowed to establish each model response stream; the agent's when absent.",
  ),
  retry: RetrySchema.nullish().describe(
    "How establishing a model response stream is retried; the agent's when absent.",
  ),
}).strict().meta({ id: "ModelConfig", description: "A run's model configuration." });

/** The spec's CapabilityOverride. */
export const CapabilityOverrideSchema = z.discriminatedUnion("strategy", [
  z.object({
    strategy: z.literal("inherit").describe("The agent's capabilities, unchanged."),
  }).strict(),
  z.object({
    strategy: z.literal("extend").describe("The agent's capabilities and these."),
    capabilities: z.array(z.string().min(1)).describe("Capability names of the manifest."),
  }).strict(),
  z.object({
    strategy: z.literal("replace").describe("Only these capabilities."),
    capabilities: z.array(z.string().min(1)).describe("Capability names of the manifest."),
  }).strict(),
]).meta({ id: "CapabilityOverride", description: "Which capabilities (tool sets) a run has." });

/** The spec's ContextVar. */
export const ContextVarSchema = z.object({
  description: z.string().describe("What the value is."),
  value: z.string().describe("The value."),
}).strict().meta({
  id: "ContextVar",
  description: "A context variable, listed in the system prompt as `- <description>: <value>`.",
});

/** The spec's ToolDefinition (a client-defined tool). */
export const ToolDefinitionSchema = z.object({
  name: z.string().min(1).max(128)
    .regex(/^[A-Za-z0-9_\-]+$/, "must hold only letters, digits, '_' and '-'")
    .meta({ format: "tool-name", description: "The tool's name (no server tool's)." }),
  description: z.string().describe("What the tool does, for the model."),
  parameters: z.record(z.string(), z.unknown()).describe(
    "The JSON Schema of the tool's arguments.",
  ),
}).strict().meta({
  id: "ToolDefinition",
  description: "A client tool: the model may call it, the client runs it (docs/engine.md).",
});

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

/** What a run request does when its session already has a run going (docs/api.md). */
export const MultitaskStrategySchema = z.enum([
  "reject",
  "enqueue",
  "interrupt",
  "rollback",
  "steer",
]).meta({
  id: "MultitaskStrategy",
  description: "What a run request does when its session already has a running (or queued) " +
    "run: `reject` it (409003, the default), `enqueue` it (it starts once that run ended), " +
    "`interrupt` that run (cancelled, its progress kept) or `rollback` it (cancelled, its " +
    "messages removed) and start, or `steer` it: the request's messages join that run at its " +
    "next step boundary and no run starts (docs/api.md, Double texting).",
});

/** A validated `multitask_strategy`. */
export type MultitaskStrategy = z.infer<typeof MultitaskStrategySchema>;

/** The run request body of `POST /v1/runs` and `POST /v1/runs/start`. */
export const RunRequestSchema = z.object({
  session_id: ClientIdSchema.nullish().describe(
    "The session to run in: continued from its latest checkpoint, created when it does not " +
      "exist; a new session with a generated id when absent.",
  ),
  run_id: ClientIdSchema.nullish().describe("The run's id; generated when absent."),
  checkpoint_id: z.string().min(1).nullish().describe(
    "Start from this checkpoint of the session instead of its latest (a fork).",
  ),
  resume_payload: z.record(z.string(), z.unknown()).nullish().describe(
    "Answers to what the session's interrupted run waits for: `tool_results` " +
      "(`[{tool_call_id, result, is_error?}]`, client tools) and `approvals` " +
      "(`[{tool_call_id, approved, reason?}]`); see docs/engine.md, Interrupts.",
  ),
  model: ModelConfigSchema.nullish().describe("Another model, timeout or retry for this run."),
  reasoning: z.enum(["show", "hide"]).nullish().describe(
    "Whether this run streams the model's reasoning (`reasoning_message_*` events); the agent's " +
      "`reasoning` setting when absent. It is stored and sent back to the provider either way.",
  ),
  token_budget: z.number().int().positive().nullish().describe(
    "Most tokens (input plus output, over all its model steps) this run may use; the agent's " +
      "`token_budget` when absent, and never above it. Past it the run ends `failed` with " +
      "`token_budget_exceeded` before its next model step.",
  ),
  capability_override: CapabilityOverrideSchema.nullish().describe(
    "Other capabilities (tool sets) for this run.",
  ),
  messages: z.array(MessageInputSchema).min(1).describe(
    "The messages the run adds to the session before it runs (a user message, usually).",
  ),
  context_vars: z.array(ContextVarSchema).nullish().describe(
    "Context variables, listed in the system prompt for this run.",
  ),
  context: z.record(z.string(), z.unknown()).nullish().describe(
    "Replaces the agent state (the `context`) the run starts from.",
  ),
  tools: z.array(ToolDefinitionSchema).nullish().describe(
    "Client tools the model may call in this run; a call stops the run `interrupted` until the " +
      "client answers it.",
  ),
  multitask_strategy: MultitaskStrategySchema.nullish().describe(
    "What to do when the session already has a running (or queued) run; `reject` when absent.",
  ),
  on_disconnect: z.enum(["cancel", "continue"]).nullish().describe(
    "What closing the response of `POST /v1/runs` does: `cancel` the run (the spec's rule, the " +
      "default unless `http_server.on_disconnect` says otherwise) or let it `continue`, so the " +
      "client can resume its stream from `GET /v1/runs/{run_id}/events` with `Last-Event-ID`.",
  ),
}).strict().meta({
  id: "RunRequest",
  description: "The body of `POST /v1/runs` and `POST /v1/runs/start`.",
});

/** An RFC 6902 JSON Patch operation (spec: PatchOperation), discriminated by `op`. */
export const PatchOperationSchema = z.discriminatedUnion("op", [
  z.object({
    op: z.enum(["add", "replace", "test"]).describe("Set, replace or test the value at `path`."),
    path: z.string().describe("JSON Pointer"),
    value: z.unknown().describe("The value."),
  }),
  z.object({
    op: z.literal("remove").describe("Remove the value at `path`."),
    path: z.string().describe("JSON Pointer"),
  }),
  z.object({
    op: z.enum(["move", "copy"]).describe("Move or copy the value at `from` to `path`."),
    from: z.string().describe("JSON Pointer"),
    path: z.string().describe("JSON Pointer"),
  }),
]).meta({ id: "PatchOperation", description: "An RFC 6902 JSON Patch operation." });

/** An RFC 6902 JSON Patch operation. */
export type PatchOperation = z.infer<typeof PatchOperationSchema>;

/** Response of `POST /v1/runs/start`. */
export const RunStartedSchema = z.object({
  run_id: z.string().describe("The run's id."),
  session_id: z.string().describe("The session it runs in."),
  steered: z.boolean().optional().describe(
    "True when the request's messages joined the session's running run `run_id` " +
      '(`multitask_strategy: "steer"`) instead of starting a run (extension).',
  ),
  status: z.literal("queued").optional().describe(
    "`queued` when the run waits in the run queue (every slot taken, or " +
      '`multitask_strategy: "enqueue"` behind its session\'s runs) instead of running (extension).',
  ),
}).meta({ id: "RunStarted", description: "A run started in the background." });

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
  z.object({
    items: z.array(item).describe("This page's records, in order."),
    count: z.number().int().describe("How many records this page holds."),
    next_page: z.string().nullable().describe(
      "The cursor of the next page (its `page` parameter); null on the last page.",
    ),
  });

/** A page of sessions. */
export const SessionListSchema = listEnvelope(SessionSchema).meta({
  id: "SessionList",
  description: "A page of sessions.",
});
/** A page of messages. */
export const MessageListSchema = listEnvelope(MessageSchema).meta({
  id: "MessageList",
  description: "A page of messages.",
});
/** A page of checkpoints. */
export const CheckpointListSchema = listEnvelope(CheckpointSchema).meta({
  id: "CheckpointList",
  description: "A page of checkpoints.",
});
/** A page of runs. */
export const RunListSchema = listEnvelope(RunSchema).meta({
  id: "RunList",
  description: "A page of runs.",
});

/** Generic error body. */
export const ErrorBodySchema = z.object({
  code: z.number().int().describe(
    "The error code: the HTTP status times 1000 plus a sub-index (docs/errors.md).",
  ),
  message: z.string().describe("What went wrong, for a person."),
}).meta({ id: "ErrorBody", description: "An error (every status but 422)." });
/** Validation error body. */
export const ValidationErrorBodySchema = z.object({
  code: z.number().int().describe("422000."),
  fields: z.array(z.object({
    field: z.string().describe(
      "The field, as a dotted path (`messages.0.role`; `body` for the whole body).",
    ),
    errors: z.array(z.object({
      code: z.string().describe("The rule it breaks (`required`, `type`, `range`, ...)."),
      message: z.string().optional().describe("The rule, for a person."),
      params: z.record(z.string(), z.unknown()).optional().describe(
        "The rule's parameters (`min`, `max`, `expected`, ...).",
      ),
    })).describe("Each rule the field breaks."),
  })).describe("Each invalid field."),
}).meta({ id: "ValidationErrorBody", description: "A validation error (422)." });

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
