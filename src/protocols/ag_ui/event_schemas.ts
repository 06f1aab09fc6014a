/**
 * The AG-UI events this add-on sends, as zod schemas: the API reference documents its streams
 * with them (each frame's `data:`), so a generated client reads typed events. They describe what
 * the encoder writes (a subset of AG-UI 1.0's events, with the fields it fills); a test checks
 * every frame of real runs against them, and that their type is one of `@ag-ui/core`'s events.
 */
import { EventType } from "@ag-ui/core";
import { z } from "zod";
import { PatchOperationSchema } from "../../api/schemas.ts";

const event = <T extends EventType, S extends z.ZodRawShape>(
  type: T,
  description: string,
  shape: S,
) =>
  z.object({
    type: z.literal(type).describe("The event's type (also the SSE frame's `event:`)."),
    timestamp: z.number().int().describe("Epoch milliseconds; never decreases in a stream."),
    ...shape,
  }).describe(description);

/** Builds the schema of `agUiEventSchema`. */
function build() {
  const MessageId = z.string().describe("The assistant message's id (as stored).");
  const ToolCallId = z.string().describe("The tool call's id.");
  const ReasoningId = z.string().describe("The reasoning's id (one per reasoning block).");
  const StepName = z.string().describe("`model` or `tools`.");
  const ThreadId = z.string().describe("The thread (native session).");
  const RunId = z.string().describe("The run's id, as the client knows it.");

  const ToolCall = z.object({
    id: ToolCallId,
    type: z.literal("function").describe("Always `function`."),
    function: z.object({
      name: z.string().describe("The tool called."),
      arguments: z.string().describe("The arguments: a JSON object, as text."),
    }).describe("The call."),
  });

  const Message = z.discriminatedUnion("role", [
    z.object({
      id: z.string().describe("The message's id."),
      role: z.literal("user").describe("A user's message."),
      content: z.string().describe("Its text."),
    }),
    z.object({
      id: z.string().describe("The message's id."),
      role: z.literal("system").describe("Instructions (native `system`)."),
      content: z.string().describe("Its text."),
    }),
    z.object({
      id: z.string().describe("The message's id."),
      role: z.literal("assistant").describe("The agent's message."),
      content: z.string().optional().describe("Its text, when it has any."),
      toolCalls: z.array(ToolCall).optional().describe("The tool calls it made."),
    }),
    z.object({
      id: z.string().describe("The message's id."),
      role: z.literal("tool").describe("A tool's result."),
      toolCallId: ToolCallId,
      content: z.string().describe("The result: its text, or its JSON."),
    }),
  ]).meta({ id: "AgUiMessage", description: "A stored message in AG-UI form." });

  const Interrupt = z.object({
    id: z.string().describe("What a resume entry's `interruptId` names."),
    reason: z.string().describe("`tool_approval`, `client_tool`, `max_steps`, `shutdown`, ..."),
    message: z.string().optional().describe("What the run waits for, for a person."),
    toolCallId: z.string().optional().describe("The tool call it waits on, if any."),
    responseSchema: z.record(z.string(), z.unknown()).optional().describe(
      "The JSON Schema of a `resolved` entry's `payload` (approvals).",
    ),
  });

  const Outcome = z.discriminatedUnion("type", [
    z.object({
      type: z.literal("success").describe("The run ended (or waits only for client tools)."),
      pendingToolCallIds: z.array(z.string()).optional().describe(
        "Client tool calls the next run's `tool` messages answer.",
      ),
    }),
    z.object({
      type: z.literal("interrupt").describe("The run waits: resume it with `resume` entries."),
      interrupts: z.array(Interrupt).describe("Everything it waits for."),
    }),
    z.object({ type: z.literal("cancelled").describe("The run was cancelled.") }),
  ]);
  return z.discriminatedUnion("type", [
    event(EventType.RUN_STARTED, "The run began.", {
      threadId: ThreadId,
      runId: RunId,
      protocolVersion: z.string().describe("The AG-UI version spoken, `1.0`."),
    }),
    event(EventType.MESSAGES_SNAPSHOT, "The thread's whole conversation.", {
      messages: z.array(Message).describe("Oldest first."),
    }),
    event(EventType.STEP_STARTED, "A model or tools step began.", { stepName: StepName }),
    event(EventType.STEP_FINISHED, "A model or tools step ended.", { stepName: StepName }),
    event(EventType.TEXT_MESSAGE_START, "A message begins.", {
      messageId: MessageId,
      role: z.enum(["assistant", "user"]).describe(
        "`assistant`; `user` for a message another request sent to the running run (steer).",
      ),
    }),
    event(EventType.TEXT_MESSAGE_CONTENT, "A chunk of its text.", {
      messageId: MessageId,
      delta: z.string().describe("The next chunk."),
    }),
    event(EventType.TEXT_MESSAGE_END, "The message is complete.", { messageId: MessageId }),
    event(EventType.REASONING_START, "The model begins reasoning.", { messageId: ReasoningId }),
    event(EventType.REASONING_MESSAGE_START, "A reasoning message begins.", {
      messageId: ReasoningId,
      role: z.literal("reasoning").describe("Always `reasoning`."),
    }),
    event(EventType.REASONING_MESSAGE_CONTENT, "A chunk of the reasoning.", {
      messageId: ReasoningId,
      delta: z.string().describe("The next chunk."),
    }),
    event(EventType.REASONING_MESSAGE_END, "The reasoning message is complete.", {
      messageId: ReasoningId,
    }),
    event(EventType.REASONING_ENCRYPTED_VALUE, "Reasoning the provider sent only encrypted.", {
      subtype: z.literal("message").describe("Always `message`."),
      entityId: ReasoningId,
      encryptedValue: z.string().describe("The provider's opaque value."),
    }),
    event(EventType.REASONING_END, "The reasoning is complete.", { messageId: ReasoningId }),
    event(EventType.TOOL_CALL_START, "The model begins a tool call.", {
      toolCallId: ToolCallId,
      toolCallName: z.string().describe("The tool called."),
      parentMessageId: z.string().describe("The assistant message that makes the call."),
    }),
    event(EventType.TOOL_CALL_ARGS, "A chunk of the call's arguments.", {
      toolCallId: ToolCallId,
      delta: z.string().describe("The next chunk of the JSON text."),
    }),
    event(EventType.TOOL_CALL_END, "The call's arguments are complete.", {
      toolCallId: ToolCallId,
    }),
    event(EventType.TOOL_CALL_RESULT, "A server tool's result.", {
      messageId: z.string().describe("The `tool` message that stores it."),
      toolCallId: ToolCallId,
      content: z.string().describe("The result: its text, or its JSON."),
      role: z.literal("tool").describe("Always `tool`."),
    }),
    event(EventType.STATE_SNAPSHOT, "The whole agent state.", {
      snapshot: z.record(z.string(), z.unknown()).describe("The native `context` (`{}` if none)."),
    }),
    event(EventType.STATE_DELTA, "A change of the agent state.", {
      delta: z.array(PatchOperationSchema).describe("RFC 6902 operations rooted at the state."),
    }),
    event(EventType.CUSTOM, "A live update a tool emitted.", {
      name: z.string().describe("The name the tool gave it."),
      value: z.unknown().describe("The update."),
    }),
    event(EventType.RUN_FINISHED, "The run ended (the last event).", {
      threadId: ThreadId,
      runId: RunId,
      outcome: Outcome.describe("How it ended, and what it waits for."),
      result: z.unknown().optional().describe("A completed run's `{ text, context }`."),
      usage: z.array(z.object({
        inputTokens: z.number().int().optional().describe("Prompt tokens, cached included."),
        outputTokens: z.number().int().optional().describe("Completion tokens."),
        totalTokens: z.number().int().optional().describe("Input plus output."),
        reasoningTokens: z.number().int().optional().describe("Of the output, reasoning."),
        cachedInputTokens: z.number().int().optional().describe("Of the input, read from cache."),
      })).optional().describe("The run's tokens (one entry: the run's model), when reported."),
      metadata: z.object({
        finishReason: z.string().describe(
          "Why the model stopped in the last model step: `stop`, `length`, `content_filter`, " +
            "`refusal`, `tool_calls`, `other` (the run record's `finish_reason`).",
        ),
      }).optional().describe("agentd's additions."),
    }),
    event(EventType.RUN_ERROR, "The run failed (the last event).", {
      message: z.string().describe("What failed."),
      code: z.string().describe("The native run error's code (`model_http_500`, ...)."),
    }),
  ]).meta({
    id: "AgUiEvent",
    description: "One AG-UI event: the `data:` of an SSE frame whose `event:` is its `type`.",
  });
}

let built: ReturnType<typeof build> | undefined;

/**
 * Every AG-UI event the add-on sends, by `type` (docs/ag-ui.md, Response): built on first use
 * (the API reference, tests), not at start-up.
 */
export function agUiEventSchema(): ReturnType<typeof build> {
  return built ??= build();
}

/** An AG-UI event as this add-on sends it. */
export type AgUiWireEvent = z.infer<ReturnType<typeof agUiEventSchema>>;
