/**
 * The native run request of a `useChat` request. The chat's messages are the client's whole copy
 * of the conversation; the session already holds most of it. So: user and system messages the
 * session does not hold (by id) are the run's input (text parts only); tool parts of assistant
 * messages answer the calls the session waits for (a client tool's output, an approval response);
 * nothing else is read. Pure: what it needs to know about the session is handed in. See
 * docs/ai-sdk.md.
 */
import type { MessageInput, Part, RunRequest } from "../../api/schemas.ts";
import type { PendingToolCall } from "../../engine/mod.ts";
import { errors, type FieldError } from "../../errors.ts";
import { fieldError } from "../../http/kit/mod.ts";
import type { ChatRequest, UiPart } from "./schemas.ts";

/** What the mapping needs to know about the session the chat is. */
export interface ChatView {
  /** Ids of the messages the session holds. */
  messageIds: ReadonlySet<string>;
  /** The tool calls the session waits for (client tools, approvals). */
  pending: readonly PendingToolCall[];
}

/** The native run request of a chat request, and what else the route needs. */
export interface MappedChat {
  request: RunRequest;
  /** Calls whose approval this request refuses (their result is `tool-output-denied`). */
  denied: string[];
  /**
   * True when the request only answers waiting calls (no new message): the run continues the
   * assistant message of the interrupted run.
   */
  continues: boolean;
  /** Renames a field of a native validation error to the chat request's field. */
  field(native: string): string;
}

/** The answer a call gets when the user sent a new message instead of answering it. */
export const SKIPPED = "the user sent a new message instead of answering this tool call";

/**
 * Maps a chat request onto the native run request; an `ApiError` 422 for what cannot be mapped
 * (regenerate, file parts, nothing new to run, waiting calls a continuation leaves unanswered).
 */
export function toRunRequest(body: ChatRequest, view: ChatView): MappedChat {
  const fields: FieldError[] = [];
  if (body.trigger === "regenerate-message") {
    fields.push(fieldError(
      "trigger",
      "unsupported",
      "regenerating a message is not supported: a session is append-only (send a new message)",
    ));
  }
  const messages: MessageInput[] = [];
  const messageIndex: number[] = [];
  const toolParts = new Map<string, UiPart>();
  body.messages.forEach((m, i) => {
    if (m.role === "assistant") {
      for (const part of m.parts) {
        if (isToolPart(part) && part.toolCallId) toolParts.set(part.toolCallId, part);
      }
      return;
    }
    if (view.messageIds.has(m.id)) return;
    const content = textParts(m.parts, `messages.${i}.parts`, fields);
    if (content.length === 0) return;
    messages.push({ message_id: m.id, role: m.role, content });
    messageIndex.push(i);
  });

  const approvals: { tool_call_id: string; approved: boolean; reason?: string }[] = [];
  const toolResults: { tool_call_id: string; result: unknown; is_error?: boolean }[] = [];
  const denied: string[] = [];
  const missing: string[] = [];
  for (const call of view.pending) {
    const part = toolParts.get(call.tool_call_id);
    if (call.kind === "approval") {
      const decision = part?.approval?.approved;
      if (typeof decision === "boolean") {
        const reason = part?.approval?.reason;
        approvals.push({
          tool_call_id: call.tool_call_id,
          approved: decision,
          ...(reason ? { reason } : {}),
        });
        if (!decision) denied.push(call.tool_call_id);
      } else if (messages.length > 0) {
        approvals.push({ tool_call_id: call.tool_call_id, approved: false, reason: SKIPPED });
        denied.push(call.tool_call_id);
      } else {
        missing.push(call.tool_call_id);
      }
    } else if (part?.state === "output-available") {
      toolResults.push({ tool_call_id: call.tool_call_id, result: part.output ?? null });
    } else if (part?.state === "output-error") {
      toolResults.push({
        tool_call_id: call.tool_call_id,
        result: part.errorText ?? "the client tool failed",
        is_error: true,
      });
    } else if (messages.length > 0) {
      toolResults.push({ tool_call_id: call.tool_call_id, result: SKIPPED, is_error: true });
    } else {
      missing.push(call.tool_call_id);
    }
  }
  const answered = approvals.length + toolResults.length > 0;
  if (missing.length > 0 && answered) {
    fields.push(fieldError(
      "messages",
      "missing_tool_result",
      `a continuation must answer every waiting tool call; unanswered: ${missing.join(", ")}`,
      { tool_call_ids: missing },
    ));
  } else if (messages.length === 0 && !answered && fields.length === 0) {
    fields.push(fieldError(
      "messages",
      "nothing_to_run",
      "no user message the chat does not hold yet, and no answer to a waiting tool call",
      missing.length > 0 ? { tool_call_ids: missing } : undefined,
    ));
  }
  if (fields.length > 0) throw errors.validation(fields);

  const request: RunRequest = {
    session_id: body.id,
    messages,
    model: body.model,
    tools: body.tools && body.tools.length > 0 ? body.tools : null,
    context: body.context,
    context_vars: body.context_vars,
    resume_payload: answered
      ? {
        ...(approvals.length > 0 ? { approvals } : {}),
        ...(toolResults.length > 0 ? { tool_results: toolResults } : {}),
      }
      : null,
  };
  return {
    request,
    denied,
    continues: messages.length === 0,
    field: (native) => renameField(native, messageIndex),
  };
}

/** Whether a UI part is a tool part (`tool-<name>` or `dynamic-tool`). */
function isToolPart(part: UiPart): boolean {
  return part.type.startsWith("tool-") || part.type === "dynamic-tool";
}

/** The text parts of a user or system message; file parts are refused, others skipped. */
function textParts(parts: UiPart[], at: string, fields: FieldError[]): Part[] {
  const out: Part[] = [];
  parts.forEach((part, j) => {
    if (part.type === "text") {
      if (typeof part.text !== "string") {
        fields.push(fieldError(`${at}.${j}.text`, "required", "is required"));
      } else if (part.text !== "") {
        out.push({ type: "text", value: part.text });
      }
    } else if (part.type === "file") {
      fields.push(fieldError(
        `${at}.${j}.type`,
        "unsupported_part",
        "'file' parts are not supported; only text parts are",
        { allowed: ["text"] },
      ));
    }
  });
  return out;
}

/** The chat request's field behind a field of the native request. */
function renameField(native: string, messageIndex: number[]): string {
  const [head, second, ...rest] = native.split(".");
  switch (head) {
    case "session_id":
      return "id";
    case "resume_payload":
      return "messages";
    case "messages": {
      const index = messageIndex[Number(second)];
      if (index === undefined) return "messages";
      const tail = rest[0] === "content" ? ["parts", ...rest.slice(1)] : rest;
      return ["messages", String(index), ...tail].join(".");
    }
    default:
      return native;
  }
}
