/**
 * The native run request of an AG-UI run input: its messages as native messages (those the thread
 * already holds left out), its `resume` entries as the `resume_payload` (resume_payload.ts), and
 * the way back from a native field name to the AG-UI request's for errors. Pure: what it needs to
 * know about the thread (the messages it holds, what it waits for) is handed in. See
 * docs/ag-ui.md for the mapping in prose.
 */
import type { MessageInput, Part, RunRequest, ToolCall } from "../../api/schemas.ts";
import { errors, type FieldError } from "../../errors.ts";
import { fieldError, fieldErrors, parseInput } from "../../http/kit/mod.ts";
import type { AgUiInputMessage, AgUiRunInput } from "./input.ts";
import type { OpenInterrupt } from "./interrupts.ts";
import { type MappedResume, mapResume } from "./resume_payload.ts";
import { ContentSchema } from "./schemas.ts";

/** What the mapping needs to know about the thread the request continues. */
export interface ThreadView {
  /** Ids of the messages the session already holds. */
  messageIds: ReadonlySet<string>;
  /** What the thread's last stopped run waits for (see interrupts.ts). */
  open: OpenInterrupt[];
}

/** An empty thread: a session that does not exist yet. */
export const NEW_THREAD: ThreadView = { messageIds: new Set(), open: [] };

/** The native run request of an AG-UI run, and what else the route needs to serve it. */
export interface MappedRun {
  request: RunRequest;
  /** Ids of every message of the request (held or new), for the encoder. */
  clientMessageIds: string[];
  /** Renames a field of a native validation error to the AG-UI request's field. */
  field(native: string): string;
}

/**
 * Maps an AG-UI run input onto the native run request. Messages the thread already holds (same
 * id) are left out, so the official client's habit of sending the whole conversation stores
 * nothing twice; resume entries become the native `resume_payload`. An `ApiError` 422 for what
 * cannot be mapped (media parts, unparsable tool call arguments, unknown or missing interrupts).
 */
export function toRunRequest(input: AgUiRunInput, thread: ThreadView): MappedRun {
  const fields: FieldError[] = [];
  const messages: MessageInput[] = [];
  const messageIndex: number[] = [];
  const seen = new Set<string>();
  const clientMessageIds: string[] = [];
  /** Tool call ids that a new `tool` message of this request answers. */
  const answeredByMessage = new Set<string>();

  input.messages.forEach((m, i) => {
    // Reasoning and activity messages are the client's renderings, not conversation.
    if (m.role === "reasoning" || m.role === "activity") return;
    if (m.id !== null) {
      if (seen.has(m.id)) {
        fields.push(fieldError(`messages.${i}.id`, "duplicate_id", `'${m.id}' is used twice`));
        return;
      }
      seen.add(m.id);
      clientMessageIds.push(m.id);
      if (thread.messageIds.has(m.id)) return;
    }
    const native = toNativeMessage(m, `messages.${i}`, fields);
    if (!native) return;
    if (native.role === "tool" && native.tool_call_id) answeredByMessage.add(native.tool_call_id);
    messages.push(native);
    messageIndex.push(i);
  });

  const resume = mapResume(input, thread.open, answeredByMessage, fields);
  if (fields.length > 0) throw errors.validation(fields);

  // The official client sends `{}` when it holds no state; that must not wipe the thread's state.
  const context = input.state && Object.keys(input.state).length > 0 ? input.state : null;
  const request: RunRequest = {
    session_id: input.threadId,
    run_id: input.runId,
    model: input.model,
    messages,
    context_vars: input.context.length > 0 ? input.context : null,
    context,
    tools: input.tools.length > 0 ? input.tools : null,
    resume_payload: resume.payload,
    ...(input.multitaskStrategy ? { multitask_strategy: input.multitaskStrategy } : {}),
  };
  return {
    request,
    clientMessageIds,
    field: (native) => renameField(native, input, messageIndex, resume),
  };
}

/** The native message of an AG-UI message, or null (with field errors) when it has none. */
function toNativeMessage(
  m: AgUiInputMessage,
  at: string,
  fields: FieldError[],
): MessageInput | null {
  const base = m.id !== null ? { message_id: m.id } : {};
  switch (m.role) {
    case "user":
    case "system":
    case "developer": {
      const content = textParts(m.content, `${at}.content`, fields);
      // The native API has no developer role; developer instructions are system instructions.
      const role = m.role === "developer" ? "system" : m.role;
      return { ...base, role, content };
    }
    case "assistant": {
      const content = textParts(m.content, `${at}.content`, fields);
      const out: MessageInput = { ...base, role: "assistant", content };
      const calls = (m.toolCalls ?? []).flatMap((call, j): ToolCall[] => {
        const args = parseArguments(call.function.arguments);
        if (args === null) {
          fields.push(fieldError(
            `${at}.${m.toolCallsName}.${j}.function.arguments`,
            "json",
            "must be a JSON object encoded as a string",
          ));
          return [];
        }
        return [{ id: call.id, name: call.function.name, arguments: args }];
      });
      if (calls.length > 0) out.tool_calls = calls;
      return out;
    }
    case "tool": {
      if (m.toolCallId === null) {
        fields.push(fieldError(`${at}.toolCallId`, "required", "is required"));
        return null;
      }
      const text = textParts(m.content, `${at}.content`, fields)
        .map((p) => p.value as string).join("");
      // A stored message has no error flag: a failed client tool reads as `{ error }`, the same
      // shape the engine gives the model for a failed server tool.
      const content: Part[] = m.error !== null
        ? [{
          type: "data",
          value: text !== "" ? { error: m.error, content: text } : { error: m.error },
        }]
        : [{ type: "text", value: text }];
      return { ...base, role: "tool", content, tool_call_id: m.toolCallId };
    }
    default:
      return null;
  }
}

/** Text parts of AG-UI content (a string or text parts); other part types are refused. */
function textParts(
  content: AgUiInputMessage["content"],
  at: string,
  fields: FieldError[],
): Extract<Part, { type: "text" }>[] {
  const parsed = parseInput(ContentSchema, content);
  if (!parsed.success) {
    fields.push(...fieldErrors(ContentSchema, parsed.error.issues, at));
    return [];
  }
  const value = parsed.data;
  if (value === null || value === undefined) return [];
  if (typeof value === "string") return value === "" ? [] : [{ type: "text", value }];
  const parts: Extract<Part, { type: "text" }>[] = [];
  value.forEach((part, j) => {
    if (part.type !== "text") {
      fields.push(fieldError(
        `${at}.${j}.type`,
        "unsupported_part",
        `'${part.type}' parts are not supported; only text parts are`,
        { allowed: ["text"] },
      ));
    } else if (typeof part.text !== "string") {
      fields.push(fieldError(`${at}.${j}.text`, "required", "is required"));
    } else {
      parts.push({ type: "text", value: part.text });
    }
  });
  return parts;
}

/** Tool call arguments as an object, or null when they are not a JSON object. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The AG-UI field behind a field of the native request (see `MappedRun.field`). */
function renameField(
  native: string,
  input: AgUiRunInput,
  messageIndex: number[],
  resume: MappedResume,
): string {
  const [head, second, third, ...rest] = native.split(".");
  const tail = (parts: (string | undefined)[]) =>
    parts.filter((p): p is string => p !== undefined).join(".");
  switch (head) {
    case "session_id":
      return "threadId";
    case "run_id":
      return "runId";
    case "context":
      return "state";
    case "context_vars":
      return tail(["context", second, third, ...rest]);
    case "model":
      return tail([input.forwardedPropsName, "model", second, third, ...rest]);
    case "messages": {
      const index = messageIndex[Number(second)];
      if (index === undefined) return native;
      const m = input.messages[index];
      const renamed = third === "tool_call_id"
        ? m.toolCallIdName
        : third === "tool_calls"
        ? m.toolCallsName
        : third;
      return tail(["messages", String(index), renamed, ...rest]);
    }
    case "resume_payload": {
      const from = second === "approvals"
        ? resume.approvals
        : second === "tool_results"
        ? resume.toolResults
        : null;
      const index = from?.[Number(third)];
      if (index !== undefined) return `resume.${index}.interruptId`;
      return resume.given ? "resume" : "messages";
    }
    default:
      return native;
  }
}
