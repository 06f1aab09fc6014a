/**
 * Request mapping of the AG-UI add-on: the AG-UI `RunAgentInput` (camelCase as the official client
 * sends it, or snake_case as the spec's examples write it) validated and turned into the native
 * run request the run service takes. Pure: what it needs to know about the thread (the messages
 * it holds, what it waits for) is handed in. See docs/ag-ui.md for the mapping in prose.
 */
import { z } from "zod";
import {
  ClientIdSchema,
  ContextVarSchema,
  type MessageInput,
  ModelConfigSchema,
  type Part,
  type RunRequest,
  type ToolCall,
  type ToolDefinition,
  ToolDefinitionSchema,
} from "../../api/schemas.ts";
import { type OnDisconnect, OnDisconnectSchema } from "../../config/schema.ts";
import { ApiError, errors, type FieldError } from "../../errors.ts";
import { fieldErrors, parseInput, validate } from "../../http/kit/mod.ts";
import type { OpenInterrupt } from "./interrupts.ts";

/** A content part of an AG-UI message; only text parts are supported (checked after parsing). */
const ContentPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

/** Message content: a string or content parts. */
const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]).nullish();

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
type RawMessage = z.infer<typeof MessageSchema>;

/** A validated AG-UI run request, aliases resolved. */
export interface AgUiRunInput {
  threadId: string | null;
  runId: string | null;
  parentRunId: string | null;
  /** Undefined when absent or null. */
  state: Record<string, unknown> | undefined;
  messages: AgUiInputMessage[];
  tools: ToolDefinition[];
  context: { description: string; value: string }[];
  model: z.infer<typeof ModelConfigSchema> | null;
  /** `forwardedProps.on_disconnect`; null when absent (the add-on's default applies). */
  onDisconnect: OnDisconnect | null;
  /** Null when absent or empty. */
  resume: { interruptId: string; status: "resolved" | "cancelled"; payload: unknown }[] | null;
  /** The spelling the client used for `forwardedProps`, for error field names. */
  forwardedPropsName: string;
}

/** One message of the request, aliases resolved. */
export interface AgUiInputMessage {
  id: string | null;
  role: RawMessage["role"];
  /** Unchecked until the role is known. */
  content: unknown;
  toolCalls: z.infer<typeof ToolCallSchema>[] | null;
  /** The spelling the client used for `toolCalls`. */
  toolCallsName: string;
  toolCallId: string | null;
  toolCallIdName: string;
  error: string | null;
}

/**
 * Validates a request body as an AG-UI run input: an `ApiError` 422 in the native validation shape
 * (field paths as the client wrote them) when it is not one.
 */
export function parseRunInput(body: unknown): AgUiRunInput {
  return resolveRunInput(validate(RunAgentInputSchema, body));
}

/**
 * Resolves a body that matches `RunAgentInputSchema` (the route's declaration validated it):
 * aliases (camelCase or snake_case, not both) and resume entries; a 422 when they conflict.
 */
export function resolveRunInput(raw: RawInput): AgUiRunInput {
  const fields: FieldError[] = [];
  const pick = <T>(camel: string, snake: string, prefix = ""): [T | null, string] => {
    const source = raw as Record<string, unknown>;
    return alias<T>(source, camel, snake, prefix, fields);
  };
  const [threadId] = pick<string>("threadId", "thread_id");
  const [runId] = pick<string>("runId", "run_id");
  const [parentRunId] = pick<string>("parentRunId", "parent_run_id");
  const [forwarded, forwardedPropsName] = pick<z.infer<typeof ForwardedPropsSchema>>(
    "forwardedProps",
    "forwarded_props",
  );
  const messages = raw.messages.map((m, i): AgUiInputMessage => {
    const source = m as Record<string, unknown>;
    const prefix = `messages.${i}.`;
    const [toolCalls, toolCallsName] = alias<RawMessage["toolCalls"]>(
      source,
      "toolCalls",
      "tool_calls",
      prefix,
      fields,
    );
    const [toolCallId, toolCallIdName] = alias<string>(
      source,
      "toolCallId",
      "tool_call_id",
      prefix,
      fields,
    );
    return {
      id: m.id ?? null,
      role: m.role,
      content: m.content,
      toolCalls: toolCalls ?? null,
      toolCallsName,
      toolCallId,
      toolCallIdName,
      error: m.error ?? null,
    };
  });
  const [onDisconnect] = forwarded
    ? alias<OnDisconnect>(
      forwarded as Record<string, unknown>,
      "onDisconnect",
      "on_disconnect",
      `${forwardedPropsName}.`,
      fields,
    )
    : [null];
  const resume = (raw.resume ?? []).map((entry, i) => {
    const [interruptId] = alias<string>(
      entry as Record<string, unknown>,
      "interruptId",
      "interrupt_id",
      `resume.${i}.`,
      fields,
    );
    if (interruptId === null) {
      fields.push(fieldError(`resume.${i}.interruptId`, "required", "is required"));
    }
    return { interruptId: interruptId ?? "", status: entry.status, payload: entry.payload };
  });
  if (fields.length > 0) throw errors.validation(fields);

  return {
    threadId,
    runId,
    parentRunId,
    state: raw.state ?? undefined,
    messages,
    tools: (raw.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters ?? { type: "object", properties: {} },
    })),
    context: (raw.context ?? []).map((c) => ({ description: c.description, value: c.value })),
    model: forwarded?.model ?? null,
    onDisconnect,
    resume: resume.length > 0 ? resume : null,
    forwardedPropsName,
  };
}

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

  const resume = mapResume(input, thread, answeredByMessage, fields);
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

/** The native `resume_payload` of the request's resume entries, and where each entry went. */
interface MappedResume {
  payload: RunRequest["resume_payload"];
  /** Index of the resume entry behind each `approvals[k]`. */
  approvals: number[];
  /** Index of the resume entry behind each `tool_results[k]`. */
  toolResults: number[];
  given: boolean;
}

/**
 * Maps resume entries onto `resume_payload`: an approval interrupt resolved (payload `{ approved,
 * reason }`, or nothing for "yes") or cancelled (rejected); a client tool interrupt resolved with
 * its result as payload or cancelled (an error result), unless a `tool` message of the request
 * answers it; a run-level interrupt (step limit, shutdown) needs no payload: the run continues
 * from the checkpoint. A resume must answer every open interrupt, each once.
 */
function mapResume(
  input: AgUiRunInput,
  thread: ThreadView,
  answeredByMessage: ReadonlySet<string>,
  fields: FieldError[],
): MappedResume {
  const out: MappedResume = { payload: null, approvals: [], toolResults: [], given: false };
  if (!input.resume) return out;
  out.given = true;
  const open = new Map(thread.open.map((o) => [o.id, o]));
  const answered = new Set<string>();
  const approvals: { tool_call_id: string; approved: boolean; reason?: string }[] = [];
  const toolResults: { tool_call_id: string; result: unknown; is_error?: boolean }[] = [];

  input.resume.forEach((entry, i) => {
    const at = `resume.${i}.interruptId`;
    const interrupt = open.get(entry.interruptId);
    if (!interrupt) {
      const known = [...open.keys()];
      fields.push(fieldError(
        at,
        "unknown_interrupt",
        known.length > 0
          ? `'${entry.interruptId}' is not an open interrupt of the thread`
          : "the thread has no open interrupts",
        { open: known },
      ));
      return;
    }
    if (answered.has(interrupt.id)) {
      fields.push(fieldError(at, "duplicate_answer", `'${interrupt.id}' is answered twice`));
      return;
    }
    answered.add(interrupt.id);
    if (interrupt.kind === "approval") {
      approvals.push({ tool_call_id: interrupt.call.tool_call_id, ...approval(entry) });
      out.approvals.push(i);
    } else if (interrupt.kind === "client_tool") {
      // The tool message is the richer answer; the entry then only acknowledges the interrupt.
      if (answeredByMessage.has(interrupt.call.tool_call_id)) return;
      toolResults.push(
        entry.status === "resolved"
          ? { tool_call_id: interrupt.call.tool_call_id, result: entry.payload ?? null }
          : {
            tool_call_id: interrupt.call.tool_call_id,
            result: entry.payload ?? "the user cancelled this tool call",
            is_error: true,
          },
      );
      out.toolResults.push(i);
    }
  });

  const missing = thread.open.filter((o) =>
    !answered.has(o.id) && !(o.kind === "client_tool" && answeredByMessage.has(o.id))
  ).map((o) => o.id);
  if (missing.length > 0) {
    fields.push(fieldError(
      "resume",
      "missing_resume",
      `a resume must answer every open interrupt; unanswered: ${missing.join(", ")}`,
      { interrupt_ids: missing },
    ));
  }
  if (approvals.length > 0 || toolResults.length > 0) {
    out.payload = {
      ...(approvals.length > 0 ? { approvals } : {}),
      ...(toolResults.length > 0 ? { tool_results: toolResults } : {}),
    };
  }
  return out;
}

/** The approval decision of a resume entry. */
function approval(entry: { status: "resolved" | "cancelled"; payload: unknown }): {
  approved: boolean;
  reason?: string;
} {
  const payload = entry.payload;
  const object = payload !== null && typeof payload === "object" && !Array.isArray(payload)
    ? payload as Record<string, unknown>
    : {};
  const reason = typeof object.reason === "string" ? object.reason : undefined;
  if (entry.status === "cancelled") {
    return { approved: false, reason: reason ?? "the user cancelled the approval" };
  }
  const approved = payload === false ? false : object.approved !== false;
  return reason !== undefined ? { approved, reason } : { approved };
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

/**
 * Re-labels a native validation error with the AG-UI request's field names; any other error is
 * returned as it is.
 */
export function relabel(err: unknown, field: (native: string) => string): unknown {
  if (!(err instanceof ApiError) || !err.fields) return err;
  return errors.validation(err.fields.map((f) => ({ ...f, field: field(f.field) })));
}

/**
 * Reads a field given in camelCase or snake_case. Both present with different values is a
 * `conflict` error; returns the value (null when absent) and the spelling used.
 */
function alias<T>(
  source: Record<string, unknown>,
  camel: string,
  snake: string,
  prefix: string,
  fields: FieldError[],
): [T | null, string] {
  const a = source[camel];
  const b = source[snake];
  const hasA = a !== undefined && a !== null;
  const hasB = b !== undefined && b !== null;
  if (hasA && hasB && JSON.stringify(a) !== JSON.stringify(b)) {
    fields.push(fieldError(
      `${prefix}${snake}`,
      "conflict",
      `'${camel}' and '${snake}' are the same field and disagree; send one`,
    ));
  }
  if (hasA) return [a as T, camel];
  if (hasB) return [b as T, snake];
  return [null, camel];
}

function fieldError(
  field: string,
  code: string,
  message: string,
  params?: Record<string, unknown>,
): FieldError {
  return { field, errors: [{ code, message, ...(params ? { params } : {}) }] };
}
