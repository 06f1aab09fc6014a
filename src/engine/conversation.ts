/**
 * Conversation helpers: the messages the engine writes (assistant turns, tool results) and the
 * questions it asks of a conversation (which tool calls are still unanswered).
 */
import type { Message, MessageInput, Part, ToolCall } from "../api/schemas.ts";
import { newId } from "../ids.ts";

/**
 * Builds an assistant message; `message_id` is the id its streamed events carried, `content` its
 * reasoning and text in the order the model gave them.
 */
export function assistantMessage(
  messageId: string,
  content: Part[],
  toolCalls: ToolCall[],
): MessageInput {
  const message: MessageInput = { message_id: messageId, role: "assistant", content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/**
 * The value a tool message carries for the model: the result itself, or `{ error: ... }` for a
 * failure, since a stored message has no error flag of its own.
 */
export function toolResultValue(result: unknown, isError: boolean): unknown {
  return isError ? { error: result } : result;
}

/** Builds the tool message that answers `toolCallId` with one data part. */
export function toolMessage(toolCallId: string, value: unknown): MessageInput {
  return {
    message_id: newId(),
    role: "tool",
    content: [{ type: "data", value: value === undefined ? null : value }],
    tool_call_id: toolCallId,
  };
}

/** The text of a message: its text parts joined. */
export function messageText(message: Pick<Message, "content">): string {
  return message.content.filter((p) => p.type === "text").map((p) => p.value as string).join("");
}

/** Ids of the tool calls assistant messages made that no tool message answers yet. */
export function unansweredToolCalls(messages: Message[]): ToolCall[] {
  const answered = new Set(
    messages.filter((m) => m.role === "tool" && m.tool_call_id).map((m) => m.tool_call_id!),
  );
  const out: ToolCall[] = [];
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const call of m.tool_calls ?? []) if (!answered.has(call.id)) out.push(call);
  }
  return out;
}
