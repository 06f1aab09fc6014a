/**
 * Stored messages in AG-UI form, as `MESSAGES_SNAPSHOT` carries them (text parts joined, tool
 * results as a string written exactly as `TOOL_CALL_RESULT` writes the same result), or as the
 * text message events of a message that joined a running run.
 */
import {
  type AssistantMessage,
  type Event as AgUiEvent,
  EventType,
  type Message as AgUiMessage,
} from "@ag-ui/core";
import type { Message, Part } from "../../api/schemas.ts";

/** A stored message in AG-UI form (text parts joined; tool results as a string). */
export function toAgUiMessage(message: Message): AgUiMessage {
  const id = message.message_id;
  const text = partsText(message.content);
  switch (message.role) {
    case "user":
      return { id, role: "user", content: text };
    case "system":
      return { id, role: "system", content: text };
    case "tool":
      return {
        id,
        role: "tool",
        toolCallId: message.tool_call_id ?? "",
        content: toolContent(message.content),
      };
    case "assistant": {
      const out: AssistantMessage = { id, role: "assistant" };
      if (text !== "") out.content = text;
      if (message.tool_calls && message.tool_calls.length > 0) {
        out.toolCalls = message.tool_calls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        }));
      }
      return out;
    }
  }
}

/**
 * The text of parts: text as is, structured data as JSON. Reasoning and sources are not part of a
 * message's content in AG-UI (they travel as `REASONING_*` and `CUSTOM` `source` events).
 */
function partsText(parts: Part[]): string {
  return parts.flatMap((p) =>
    p.type === "text" ? [p.value] : p.type === "data" ? [JSON.stringify(p.value ?? null)] : []
  ).join("");
}

/**
 * A tool message's content as AG-UI carries it (a string): one data part is the result value,
 * so it is written exactly as `TOOL_CALL_RESULT` writes the same result.
 */
function toolContent(parts: Part[]): string {
  const [first] = parts;
  if (parts.length === 1 && first.type === "data") return contentText(first.value);
  return partsText(parts);
}

/** A tool result as text: strings as they are, anything else as JSON. */
export function contentText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

/**
 * A stored message as the text message events that show it in a stream (a message that joined a
 * running run, steer): `TEXT_MESSAGE_START` with its role (`user`, or `assistant`), its text in
 * one `TEXT_MESSAGE_CONTENT` when it has any, `TEXT_MESSAGE_END`.
 */
export function textMessageEvents(message: Message, timestamp: number): AgUiEvent[] {
  const messageId = message.message_id;
  const role = message.role === "assistant" ? "assistant" : "user";
  const delta = message.content.map((p) => p.type === "text" ? p.value : "").join("");
  return [
    { type: EventType.TEXT_MESSAGE_START, timestamp, messageId, role },
    ...(delta ? [{ type: EventType.TEXT_MESSAGE_CONTENT, timestamp, messageId, delta }] : []),
    { type: EventType.TEXT_MESSAGE_END, timestamp, messageId },
  ] as AgUiEvent[];
}
