/**
 * Wire shapes of the AG-UI add-on's requests: the AG-UI `RunAgentInput` as zod schemas, each field
 * accepted in camelCase (as the official client sends it) and in snake_case (as the spec's
 * examples write it). Role-specific rules are checked while mapping (request.ts), with precise
 * field names; see docs/ag-ui.md.
 */
import { z } from "zod";
import {
  ClientIdSchema,
  ContextVarSchema,
  ModelConfigSchema,
  ToolDefinitionSchema,
} from "../../api/schemas.ts";
import { OnDisconnectSchema } from "../../config/schema/http_server.ts";

/** A content part of an AG-UI message; only text parts are supported (checked after parsing). */
const ContentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

/** Message content: a string or content parts. */
export const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]).nullish();

/** A tool call on an AG-UI assistant message (arguments are a JSON string). */
const ToolCallSchema = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

/** One AG-UI message; role-specific rules are checked while mapping, with precise field names. */
const MessageSchema = z.looseObject({
  id: ClientIdSchema.nullish(),
  role: z.enum(["user", "assistant", "system", "developer", "tool", "reasoning", "activity"]),
  // Checked per role while mapping: activity messages carry an object here.
  content: z.unknown().optional(),
  toolCalls: z.array(ToolCallSchema).nullish(),
  tool_calls: z.array(ToolCallSchema).nullish(),
  toolCallId: z.string().min(1).nullish(),
  tool_call_id: z.string().min(1).nullish(),
  error: z.string().nullish(),
});

/** A client-defined tool; AG-UI makes `parameters` optional. */
const ToolSchema = z.looseObject({
  name: ToolDefinitionSchema.shape.name,
  description: z.string().default(""),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

/** An answer to one interrupt of the previous run. */
const ResumeEntrySchema = z.looseObject({
  interruptId: z.string().min(1).nullish(),
  interrupt_id: z.string().min(1).nullish(),
  status: z.enum(["resolved", "cancelled"]),
  payload: z.unknown().optional(),
});

/**
 * `forwardedProps`: free-form, except `model`, which is the native ModelConfig, and
 * `on_disconnect` (or `onDisconnect`), what closing the stream does to the run.
 */
const ForwardedPropsSchema = z.looseObject({
  model: ModelConfigSchema.nullish(),
  on_disconnect: OnDisconnectSchema.nullish(),
  onDisconnect: OnDisconnectSchema.nullish(),
});

/**
 * The AG-UI `RunAgentInput`, each field accepted in camelCase and snake_case. Unknown fields are
 * ignored, as AG-UI's own schemas do, so a newer client's additions do not break a run.
 */
export const RunAgentInputSchema = z.looseObject({
  threadId: ClientIdSchema.nullish(),
  thread_id: ClientIdSchema.nullish(),
  runId: ClientIdSchema.nullish(),
  run_id: ClientIdSchema.nullish(),
  parentRunId: z.string().nullish(),
  parent_run_id: z.string().nullish(),
  state: z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).nullish(),
  messages: z.array(MessageSchema),
  tools: z.array(ToolSchema).nullish(),
  context: z.array(ContextVarSchema.loose()).nullish(),
  forwardedProps: ForwardedPropsSchema.nullish(),
  forwarded_props: ForwardedPropsSchema.nullish(),
  resume: z.array(ResumeEntrySchema).nullish(),
}).meta({ id: "AgUiRunAgentInput" });

/** A body that matches `RunAgentInputSchema`. */
export type RawInput = z.infer<typeof RunAgentInputSchema>;
/** One message of a body that matches `RunAgentInputSchema`. */
export type RawMessage = z.infer<typeof MessageSchema>;
/** A tool call of an assistant message, as the client wrote it. */
export type RawToolCall = z.infer<typeof ToolCallSchema>;
/** `forwardedProps` of a body that matches `RunAgentInputSchema`. */
export type RawForwardedProps = z.infer<typeof ForwardedPropsSchema>;
