/**
 * Wire shapes of the AI SDK add-on: the body `useChat`'s `DefaultChatTransport` posts (`ai` 7: the
 * chat id, the chat's UI messages, the trigger and the message id, plus whatever the transport's
 * `body` option adds), and the UI message stream chunks the add-on answers, for the API reference.
 * UI message parts are read loosely: only text parts of new user messages and the tool parts that
 * answer waiting calls mean anything to the add-on (request.ts); see docs/ai-sdk.md.
 */
import { z } from "zod";
import {
  ClientIdSchema,
  ContextVarSchema,
  ModelConfigSchema,
  ToolDefinitionSchema,
} from "../../api/schemas.ts";
import { OnDisconnectSchema } from "../../config/schema/http_server.ts";

/** A citation's passage of its source (`agentd.citedText`), absent on a plain source. */
const SourceMetadata = z.object({
  agentd: z.object({
    citedText: z.string().describe("The passage of the source the answer cites."),
  }).describe("agentd's metadata of the source."),
}).optional().describe("A citation: `{ agentd: { citedText } }`.");

/** One part of a UI message (`text`, `file`, `tool-<name>`, `dynamic-tool`, `data-*` …). */
const UiPartSchema = z.looseObject({
  type: z.string().describe(
    "The part's type: `text` is read from new user messages, `tool-<name>` / `dynamic-tool` " +
      "from assistant messages (answers to waiting calls); others are ignored.",
  ),
  text: z.string().optional().describe("A text part's text."),
  toolCallId: z.string().optional().describe("A tool part: the call's id."),
  state: z.string().optional().describe(
    "A tool part's state (`output-available`, `output-error`, `approval-responded` …).",
  ),
  output: z.unknown().optional().describe("A tool part: the client tool's output."),
  errorText: z.string().optional().describe("A tool part: why the client tool failed."),
  approval: z.looseObject({
    id: z.string().describe("The approval's id (the add-on sends the tool call's id)."),
    approved: z.boolean().optional().describe("The user's decision."),
    reason: z.string().optional().describe("Why, if the user said."),
  }).optional().describe("A tool part: the approval asked for and, once given, the decision."),
}).meta({ id: "AiSdkUiPart", description: "A part of an AI SDK UI message." });

/** A UI message as `useChat` holds it. */
const UiMessageSchema = z.looseObject({
  id: z.string().min(1).max(128).describe("The message's id (a new user message keeps it)."),
  role: z.enum(["system", "user", "assistant"]).describe("Who wrote it."),
  parts: z.array(UiPartSchema).describe("Its parts, in order."),
  metadata: z.unknown().optional().describe("The application's metadata (ignored)."),
}).meta({ id: "AiSdkUiMessage", description: "An AI SDK UI message." });

/** The body of `POST <base>/chat`. */
export const ChatRequestSchema = z.looseObject({
  id: ClientIdSchema.describe("The chat's id: the session the run runs in (created when new)."),
  messages: z.array(UiMessageSchema).max(10_000).describe(
    "The chat's UI messages. User and system messages the session does not hold yet (by id) " +
      "are the run's input; tool parts of assistant messages answer the calls the session " +
      "waits for (client tool outputs, approval responses).",
  ),
  trigger: z.enum(["submit-message", "regenerate-message"]).default("submit-message").describe(
    "`submit-message` (`regenerate-message` is refused: a session is append-only).",
  ),
  messageId: z.string().nullish().describe(
    "The message the request is about (the assistant message a continuation completes).",
  ),
  tools: z.array(ToolDefinitionSchema).nullish().describe(
    "Client tools the model may call in this run (the transport's `body` option sends them " +
      "with every request); `onToolCall` + `addToolOutput` answer them.",
  ),
  model: ModelConfigSchema.nullish().describe("Another model, timeout or retry for this run."),
  context: z.record(z.string(), z.unknown()).nullish().describe(
    "Replaces the agent state (the `context`) the run starts from.",
  ),
  context_vars: z.array(ContextVarSchema).nullish().describe(
    "Context variables, listed in the system prompt for this run.",
  ),
  on_disconnect: OnDisconnectSchema.nullish().describe(
    "What closing the response does: `continue` (the add-on's default, so " +
      "`useChat({ resume: true })` can pick the answer up) or `cancel` the run.",
  ),
}).meta({
  id: "AiSdkChatRequest",
  description: "What `useChat`'s `DefaultChatTransport` posts (AI SDK 5 and later).",
});

/** A validated chat request. */
export type ChatRequest = z.infer<typeof ChatRequestSchema>;
/** A UI message of a chat request. */
export type UiMessage = ChatRequest["messages"][number];
/** A part of a UI message. */
export type UiPart = UiMessage["parts"][number];

/** Builds the schema of `aiSdkChunkSchema`. */
function buildChunk() {
  const ToolCallId = z.string().describe("The tool call's id (agentd's).");
  const ProviderExecuted = z.literal(true).optional().describe(
    "Present when the provider runs the call itself (web search …): `onToolCall` does not fire.",
  );
  const PartId = z.string().describe("The text part's id (the agentd assistant message's id).");
  const ReasoningId = z.string().describe("The reasoning part's id (agentd's reasoning block id).");
  return z.union([
    z.object({
      type: z.literal("start").describe("The response's assistant message begins."),
      messageId: z.string().describe("Its id: the id of the run that began it."),
      messageMetadata: z.object({
        sessionId: z.string().describe("The session (the chat id)."),
        runId: z.string().describe("The run."),
      }).describe("Which run answers."),
    }),
    z.object({ type: z.literal("start-step").describe("A model step and its tools begin.") }),
    z.object({ type: z.literal("finish-step").describe("The step ended.") }),
    z.object({ type: z.literal("text-start").describe("A text part begins."), id: PartId }),
    z.object({
      type: z.literal("text-delta").describe("More text."),
      id: PartId,
      delta: z.string().describe("The next chunk of text."),
    }),
    z.object({ type: z.literal("text-end").describe("The text part is complete."), id: PartId }),
    z.object({
      type: z.literal("reasoning-start").describe("A reasoning part begins."),
      id: ReasoningId,
    }),
    z.object({
      type: z.literal("reasoning-delta").describe("More of the model's reasoning."),
      id: ReasoningId,
      delta: z.string().describe("The next chunk of reasoning text."),
    }),
    z.object({
      type: z.literal("reasoning-end").describe("The reasoning part is complete."),
      id: ReasoningId,
    }),
    z.object({
      type: z.literal("source-url").describe("A web page the answer used or cites."),
      sourceId: z.string().describe("The source's id."),
      url: z.string().describe("The page's URL."),
      title: z.string().optional().describe("Its title."),
      providerMetadata: SourceMetadata,
    }),
    z.object({
      type: z.literal("source-document").describe("A document the answer used or cites."),
      sourceId: z.string().describe("The source's id."),
      mediaType: z.string().describe("The document's media type."),
      title: z.string().describe("Its title (or file name)."),
      filename: z.string().optional().describe("Its file name."),
      providerMetadata: SourceMetadata,
    }),
    z.object({
      type: z.literal("tool-input-start").describe("The model begins a tool call."),
      toolCallId: ToolCallId,
      toolName: z.string().describe("The tool (a server or a client tool)."),
      providerExecuted: ProviderExecuted,
    }),
    z.object({
      type: z.literal("tool-input-delta").describe("A chunk of the call's JSON input."),
      toolCallId: ToolCallId,
      inputTextDelta: z.string().describe("The next chunk of the JSON text."),
    }),
    z.object({
      type: z.literal("tool-input-available").describe("The call's input is complete."),
      toolCallId: ToolCallId,
      toolName: z.string().describe("The tool."),
      input: z.unknown().describe("The arguments."),
      providerExecuted: ProviderExecuted,
    }),
    z.object({
      type: z.literal("tool-input-error").describe("The call's input is not a JSON object."),
      toolCallId: ToolCallId,
      toolName: z.string().describe("The tool."),
      input: z.unknown().describe("The arguments as the model wrote them (text)."),
      errorText: z.string().describe("Why they cannot be used."),
    }),
    z.object({
      type: z.literal("tool-approval-request").describe("The call waits for the user's approval."),
      approvalId: z.string().describe("The approval's id (the tool call's id)."),
      toolCallId: ToolCallId,
    }),
    z.object({
      type: z.literal("tool-output-available").describe("A tool's result."),
      toolCallId: ToolCallId,
      output: z.unknown().describe("What the model sees."),
      providerExecuted: ProviderExecuted,
    }),
    z.object({
      type: z.literal("tool-output-error").describe("The tool failed."),
      toolCallId: ToolCallId,
      errorText: z.string().describe("Why (the error result as text)."),
      providerExecuted: ProviderExecuted,
    }),
    z.object({
      type: z.literal("tool-output-denied").describe("The user refused the call."),
      toolCallId: ToolCallId,
    }),
    z.object({
      type: z.string().describe(
        "`data-state` (the agent state, `id` `state`, whole after every change) or " +
          "`data-<name>` (a tool's `emit(name, value)`, `id` the name).",
      ),
      id: z.string().describe("`state`, or the emitted name: a later value replaces the part."),
      data: z.unknown().describe("The state, or the emitted value."),
    }).meta({ description: "A data part: the agent state or a tool's live update." }),
    z.object({
      type: z.literal("error").describe("The run failed (or its stream broke)."),
      errorText: z.string().describe("Why, with agentd's error code."),
    }),
    z.object({
      type: z.literal("abort").describe("The run was cancelled."),
      reason: z.string().describe("Why."),
    }),
    z.object({
      type: z.literal("finish").describe("The response is complete (the last chunk)."),
      finishReason: z.enum(["stop", "length", "content-filter", "tool-calls", "error", "other"])
        .describe(
          "`stop` (completed), `length` / `content-filter` (completed, but the model was cut by " +
            "its output limit / filtered or refused), `tool-calls` (waits for client tools or " +
            "approvals), `error` (failed), `other` (cancelled, or stopped at a limit).",
        ),
      messageMetadata: z.object({
        sessionId: z.string().describe("The session."),
        runId: z.string().describe("The run."),
        status: z.string().describe("The run's final status."),
        usage: z.object({
          inputTokens: z.number().optional().describe("Prompt tokens, cached ones included."),
          outputTokens: z.number().optional().describe("Completion tokens, reasoning included."),
          totalTokens: z.number().optional().describe("Input and output tokens."),
          reasoningTokens: z.number().optional().describe("Of the output, the reasoning tokens."),
          cachedInputTokens: z.number().optional().describe(
            "Of the input, the tokens read from the provider's prompt cache.",
          ),
        }).optional().describe(
          "The tokens of all the run's model steps, as the provider reported.",
        ),
        modelFinishReason: z.string().optional().describe(
          "agentd's finish reason of the run's last model step (`stop`, `length`, " +
            "`content_filter`, `refusal`, `tool_calls`, `other`).",
        ),
        cost: z.number().optional().describe(
          "What the run's model steps cost at the model's price in the manifest (absent without one).",
        ),
        error: z.object({
          code: z.string().describe("agentd's error code."),
          message: z.string().describe("What went wrong."),
        }).optional().describe("A failed run's error."),
      }).describe("How the run ended."),
    }),
  ]).meta({
    id: "AiSdkChunk",
    description: "One chunk of the AI SDK UI message stream (the `data:` of an SSE frame; the " +
      "stream ends with `data: [DONE]`).",
  });
}

let chunk: ReturnType<typeof buildChunk> | undefined;

/**
 * The UI message stream chunks the add-on writes, each the `data:` of one SSE frame: built on
 * first use (the API reference, tests), not at start-up.
 */
export function aiSdkChunkSchema(): ReturnType<typeof buildChunk> {
  return chunk ??= buildChunk();
}
