/**
 * What an AG-UI client holds at a point of a run's stream, rebuilt from the frames it received
 * (the way the official client applies them), so a resumed stream can hand it back: the thread's
 * messages and state, and what is still open.
 */
import {
  type AssistantMessage,
  type Event as AgUiEvent,
  EventType,
  type Message as AgUiMessage,
  PROTOCOL_VERSION,
  type ToolCall,
} from "@ag-ui/core";
import jsonpatch from "fast-json-patch";

/** The client's view of a run's stream, folded frame by frame. */
export class ThreadFold {
  #messages: AgUiMessage[] = [];
  #state: unknown = undefined;
  #threadId = "";
  #runId = "";
  #timestamp = 0;
  #seen = false;
  readonly #openMessages = new Set<string>();
  readonly #openCalls = new Map<string, { name: string; parent: string }>();
  readonly #openSteps: string[] = [];

  /** Takes in one frame's event, as the client would apply it. */
  apply(event: AgUiEvent): void {
    this.#seen = true;
    this.#timestamp = Math.max(this.#timestamp, event.timestamp ?? 0);
    switch (event.type) {
      case EventType.RUN_STARTED:
        this.#threadId = event.threadId;
        this.#runId = event.runId;
        break;
      case EventType.MESSAGES_SNAPSHOT:
        this.#messages = structuredClone(event.messages);
        break;
      case EventType.STATE_SNAPSHOT:
        this.#state = structuredClone(event.snapshot);
        break;
      case EventType.STATE_DELTA:
        try {
          this.#state = jsonpatch.applyPatch(
            structuredClone(this.#state ?? {}),
            event.delta as jsonpatch.Operation[],
            false,
            false,
          ).newDocument;
        } catch {
          // The client would keep its state too (it warns and goes on).
        }
        break;
      case EventType.TEXT_MESSAGE_START:
        this.#openMessages.add(event.messageId);
        if (!this.#find(event.messageId)) {
          this.#messages.push({ id: event.messageId, role: "assistant", content: "" });
        }
        break;
      case EventType.TEXT_MESSAGE_CONTENT: {
        const message = this.#find(event.messageId);
        if (message && message.role === "assistant") {
          message.content = (message.content ?? "") + event.delta;
        }
        break;
      }
      case EventType.TEXT_MESSAGE_END:
        this.#openMessages.delete(event.messageId);
        break;
      case EventType.TOOL_CALL_START: {
        const parentId = event.parentMessageId ?? event.toolCallId;
        this.#openCalls.set(event.toolCallId, { name: event.toolCallName, parent: parentId });
        let parent = this.#find(parentId);
        if (!parent || parent.role !== "assistant") {
          parent = { id: parentId, role: "assistant", toolCalls: [] };
          this.#messages.push(parent);
        }
        const assistant = parent as AssistantMessage;
        assistant.toolCalls ??= [];
        if (!assistant.toolCalls.some((c) => c.id === event.toolCallId)) {
          assistant.toolCalls.push({
            id: event.toolCallId,
            type: "function",
            function: { name: event.toolCallName, arguments: "" },
          });
        }
        break;
      }
      case EventType.TOOL_CALL_ARGS: {
        const call = this.#call(event.toolCallId);
        if (call) call.function.arguments += event.delta;
        break;
      }
      case EventType.TOOL_CALL_END:
        this.#openCalls.delete(event.toolCallId);
        break;
      case EventType.TOOL_CALL_RESULT: {
        const result: AgUiMessage = {
          id: event.messageId,
          role: "tool",
          toolCallId: event.toolCallId,
          content: event.content,
        };
        // After the assistant message that made the call and the results already there.
        let at = this.#messages.findIndex((m) =>
          m.role === "assistant" && m.toolCalls?.some((c) => c.id === event.toolCallId)
        );
        if (at < 0) {
          this.#messages.push(result);
          break;
        }
        at++;
        while (at < this.#messages.length && this.#messages[at].role === "tool") at++;
        this.#messages.splice(at, 0, result);
        break;
      }
      case EventType.STEP_STARTED:
        this.#openSteps.push(event.stepName);
        break;
      case EventType.STEP_FINISHED: {
        const at = this.#openSteps.lastIndexOf(event.stepName);
        if (at >= 0) this.#openSteps.splice(at, 1);
        break;
      }
    }
  }

  /**
   * The frames that hand the client back what it held (none when it held nothing): the run
   * started, the thread's messages and state, and the message, tool calls and steps still open,
   * re-opened so the frames after the cursor continue them (the official client keeps a message or
   * a call it already has when it is started again).
   */
  prelude(): AgUiEvent[] {
    if (!this.#seen) return [];
    const timestamp = this.#timestamp;
    const out: AgUiEvent[] = [{
      type: EventType.RUN_STARTED,
      timestamp,
      threadId: this.#threadId,
      runId: this.#runId,
      protocolVersion: PROTOCOL_VERSION,
    }, {
      type: EventType.MESSAGES_SNAPSHOT,
      timestamp,
      messages: structuredClone(this.#messages),
    }];
    if (this.#state !== undefined) {
      out.push({
        type: EventType.STATE_SNAPSHOT,
        timestamp,
        snapshot: structuredClone(this.#state),
      });
    }
    for (const stepName of this.#openSteps) {
      out.push({ type: EventType.STEP_STARTED, timestamp, stepName });
    }
    for (const messageId of this.#openMessages) {
      out.push({ type: EventType.TEXT_MESSAGE_START, timestamp, messageId, role: "assistant" });
    }
    for (const [toolCallId, call] of this.#openCalls) {
      out.push({
        type: EventType.TOOL_CALL_START,
        timestamp,
        toolCallId,
        toolCallName: call.name,
        parentMessageId: call.parent,
      });
    }
    return out;
  }

  #find(id: string): AgUiMessage | undefined {
    return this.#messages.find((m) => m.id === id);
  }

  #call(id: string): ToolCall | undefined {
    for (const message of this.#messages) {
      if (message.role !== "assistant") continue;
      const call = message.toolCalls?.find((c) => c.id === id);
      if (call) return call;
    }
    return undefined;
  }
}
