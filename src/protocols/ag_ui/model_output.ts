/**
 * What the model said beyond text, in AG-UI form: reasoning blocks as `REASONING_*` events (usage
 * is `camelUsage` of src/api/usage.ts, a `TokenUsage` entry of `RUN_FINISHED`).
 */
import { type Event as AgUiEvent, EventType } from "@ag-ui/core";
import type { RunEventOf } from "../../api/events.ts";

type ReasoningEvent = RunEventOf<
  "reasoning_message_start" | "reasoning_message_content" | "reasoning_message_end"
>;

/**
 * The AG-UI events of one native reasoning event; `open` holds the reasoning messages started and
 * not ended (content outside one is dropped, as the client would reject it).
 */
export function reasoningEvents(
  event: ReasoningEvent,
  timestamp: number,
  open: Set<string>,
): AgUiEvent[] {
  const messageId = event.message_id;
  switch (event.kind) {
    case "reasoning_message_start":
      open.add(messageId);
      return [
        { type: EventType.REASONING_START, timestamp, messageId },
        { type: EventType.REASONING_MESSAGE_START, timestamp, messageId, role: "reasoning" },
      ];
    case "reasoning_message_content":
      if (!open.has(messageId)) return [];
      return [{
        type: EventType.REASONING_MESSAGE_CONTENT,
        timestamp,
        messageId,
        delta: event.delta,
      }];
    case "reasoning_message_end": {
      if (!open.delete(messageId)) return [];
      const encrypted: AgUiEvent[] = event.encrypted_value
        ? [{
          type: EventType.REASONING_ENCRYPTED_VALUE,
          timestamp,
          subtype: "message",
          entityId: messageId,
          encryptedValue: event.encrypted_value,
        } as AgUiEvent]
        : [];
      return [
        { type: EventType.REASONING_MESSAGE_END, timestamp, messageId },
        ...encrypted,
        { type: EventType.REASONING_END, timestamp, messageId },
      ];
    }
  }
}
