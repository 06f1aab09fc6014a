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
  MultitaskStrategySchema,
  ToolDefinitionSchema,
} from "../../api/schemas.ts";
import { OnDisconnectSchema } from "../../config/schema/http_server.ts";

/** A content part of an AG-UI message; only text parts are supported (checked after parsing). */
const ContentPartSchema = z.looseObject({
  type: z.string().describe("`text` (other part types are refused)."),
  text: z.string().optional().describe("A text part's text."),
});

/** Message content: a string or content parts. */
export const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]).nullish();

/** A tool call on an AG-UI assistant message (arguments are a JSON string). */
const ToolCallSchema = z.looseObject({
  id: z.string().min(1).describe("The call's id."),
  type: z.literal("function").optional().describe("Always `function`."),
  function: z.looseObject({
    name: z.string().min(1).describe("The tool called."),
    arguments: z.string().describe("The arguments: a JSON object, as text."),
  }).describe("The call."),
});

const CAMEL = "the same as its camelCase spelling";

/** One AG-UI message; role-specific rules are checked while mapping, with precise field names. */
const MessageSchema = z.looseObject({
  id: ClientIdSchema.nullish().describe("The message's id; generated when absent."),
  role: z.enum(["user", "assistant", "system", "developer", "tool", "reasoning", "activity"])
    .describe("Who wrote it (`reasoning` and `activity` messages are skipped)."),
  // Checked per role while mapping: activity messages carry an object here.
  content: z.unknown().optional().describe("A string or text parts."),
  toolCalls: z.array(ToolCallSchema).nullish().describe("An assistant message's tool calls."),
  tool_calls: z.array(ToolCallSchema).nullish().describe(`\`toolCalls\`, ${CAMEL}.`),
  toolCallId: z.string().min(1).nullish().describe("A tool message: the call it answers."),
  tool_call_id: z.string().min(1).nullish().describe(`\`toolCallId\`, ${CAMEL}.`),
  error: z.string().nullish().describe("A tool message: the client tool failed, and why."),
});

/** A client-defined tool; AG-UI makes `parameters` optional. */
const ToolSchema = z.looseObject({
  name: ToolDefinitionSchema.shape.name,
  description: z.string().default("").describe("What the tool does, for the model."),
  parameters: z.record(z.string(), z.unknown()).nullish().describe(
    "The JSON Schema of its arguments.",
  ),
});

/** An answer to one interrupt of the previous run. */
const ResumeEntrySchema = z.looseObject({
  interruptId: z.string().min(1).nullish().describe("The interrupt it answers."),
  interrupt_id: z.string().min(1).nullish().describe(`\`interruptId\`, ${CAMEL}.`),
  status: z.enum(["resolved", "cancelled"]).describe("Answered, or refused."),
  payload: z.unknown().optional().describe(
    "The answer: a client tool's result, or `{ approved, reason }` for an approval.",
  ),
});

/**
 * `forwardedProps`: free-form, except `model`, which is the native ModelConfig,
 * `on_disconnect` (or `onDisconnect`), what closing the stream does to the run, and
 * `multitask_strategy` (or `multitaskStrategy`), what the run does when its thread is busy.
 */
const ForwardedPropsSchema = z.looseObject({
  model: ModelConfigSchema.nullish().describe("The run's model configuration (native)."),
  on_disconnect: OnDisconnectSchema.nullish().describe(
    "What closing the stream does to the run: `cancel` it or let it `continue`.",
  ),
  onDisconnect: OnDisconnectSchema.nullish().describe(`\`on_disconnect\`, in camelCase.`),
  multitask_strategy: MultitaskStrategySchema.nullish().describe(
    "What the run does when the thread already has a run going (native `multitask_strategy`); " +
      "`reject` when absent.",
  ),
  multitaskStrategy: MultitaskStrategySchema.nullish().describe(
    `\`multitask_strategy\`, in camelCase.`,
  ),
});

/**
 * The AG-UI `RunAgentInput`, each field accepted in camelCase and snake_case. Unknown fields are
 * ignored, as AG-UI's own schemas do, so a newer client's additions do not break a run.
 */
export const RunAgentInputSchema = z.looseObject({
  threadId: ClientIdSchema.nullish().describe("The thread (native session); new when absent."),
  thread_id: ClientIdSchema.nullish().describe(`\`threadId\`, ${CAMEL}.`),
  runId: ClientIdSchema.nullish().describe("The run's id; generated when absent."),
  run_id: ClientIdSchema.nullish().describe(`\`runId\`, ${CAMEL}.`),
  parentRunId: z.string().nullish().describe("Accepted and ignored."),
  parent_run_id: z.string().nullish().describe("Accepted and ignored."),
  state: z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).nullish()
    .describe("Replaces the agent state (`{}` and null leave it as it is)."),
  messages: z.array(MessageSchema).describe(
    "The conversation as the client holds it; messages the thread holds are not stored again.",
  ),
  tools: z.array(ToolSchema).nullish().describe("Client tools the model may call."),
  context: z.array(ContextVarSchema.loose()).nullish().describe(
    "Context variables for the system prompt.",
  ),
  forwardedProps: ForwardedPropsSchema.nullish().describe(
    "Free-form; `model`, `on_disconnect` and `multitask_strategy` are read.",
  ),
  forwarded_props: ForwardedPropsSchema.nullish().describe(`\`forwardedProps\`, ${CAMEL}.`),
  resume: z.array(ResumeEntrySchema).nullish().describe(
    "Answers to the previous run's interrupts.",
  ),
}).meta({ id: "AgUiRunAgentInput", description: "An AG-UI `RunAgentInput` (docs/ag-ui.md)." });

/** A body that matches `RunAgentInputSchema`. */
export type RawInput = z.infer<typeof RunAgentInputSchema>;
/** One message of a body that matches `RunAgentInputSchema`. */
export type RawMessage = z.infer<typeof MessageSchema>;
/** A tool call of an assistant message, as the client wrote it. */
export type RawToolCall = z.infer<typeof ToolCallSchema>;
/** `forwardedProps` of a body that matches `RunAgentInputSchema`. */
export type RawForwardedProps = z.infer<typeof ForwardedPropsSchema>;
