/**
 * Request mapping, A2A → native, without I/O: message parts to the user message and the run's
 * context, accepted output modes, the client-tool definitions a request may carry, and how a
 * message answers the tool calls an input-required task waits for.
 */
import type { z } from "zod";
import {
  ClientIdSchema,
  type MultitaskStrategy,
  MultitaskStrategySchema,
  type Part as NativePart,
  type ToolDefinition,
  ToolDefinitionSchema,
} from "../../api/schemas.ts";
import { a2aErrors } from "./errors.ts";
import type { MessageInput, PartInput } from "./schemas.ts";

/** Output media types the agent produces: assistant text, and the structured `state`. */
export const OUTPUT_MODES = ["text/plain", "application/json"] as const;
/** Input media types the agent takes: text parts and JSON data parts. */
export const INPUT_MODES = ["text/plain", "application/json"] as const;

/** Which artifacts a client accepts. */
export interface OutputModes {
  /** Text artifacts (`text/plain`): the assistant's messages. */
  text: boolean;
  /** The structured `state` artifact (`application/json`). */
  json: boolean;
}

/** Both kinds of output, for requests that name no accepted modes. */
export const ALL_OUTPUT_MODES: OutputModes = { text: true, json: true };

/** Whether media range `accepted` (`text/plain`, `text/*`, `*\/*`) admits `type`. */
function admits(accepted: string, type: string): boolean {
  const range = accepted.split(";")[0].trim().toLowerCase();
  if (range === "*/*" || range === "*" || range === type) return true;
  return range.endsWith("/*") && type.startsWith(range.slice(0, -1));
}

/**
 * The artifacts to produce for `configuration.acceptedOutputModes`; none given means all. A list
 * that admits neither output is refused with ContentTypeNotSupportedError.
 */
export function outputModes(accepted: readonly string[] | null | undefined): OutputModes {
  if (!accepted || accepted.length === 0) return ALL_OUTPUT_MODES;
  const modes = {
    text: accepted.some((a) => admits(a, "text/plain")),
    json: accepted.some((a) => admits(a, "application/json")),
  };
  if (!modes.text && !modes.json) {
    throw a2aErrors.contentType(
      `none of the accepted output modes (${accepted.join(", ")}) is produced by this agent; ` +
        `it produces ${OUTPUT_MODES.join(" and ")}`,
      { acceptedOutputModes: accepted.join(","), supported: OUTPUT_MODES.join(",") },
    );
  }
  return modes;
}

/**
 * The one content member a part carries, or what is wrong with it. `data` is any JSON value, so a
 * `data` member holding `null` counts; the others count when set.
 */
function partKind(part: PartInput): "text" | "data" | "raw" | "url" | "none" | "several" {
  const present = (["text", "raw", "url", "data"] as const).filter((k) =>
    k === "data" ? Object.hasOwn(part, "data") : part[k] !== undefined && part[k] !== null
  );
  if (present.length === 0) return "none";
  if (present.length > 1) return "several";
  return present[0];
}

/**
 * Checks every part of a message: exactly one content member each, and only text or data
 * (raw and URL parts are refused with ContentTypeNotSupportedError, as the spec lists them
 * unsupported).
 */
export function checkParts(parts: readonly PartInput[]): void {
  parts.forEach((part, i) => {
    const kind = partKind(part);
    if (kind === "raw" || kind === "url") {
      throw a2aErrors.contentType(
        `message.parts.${i}: ${kind} parts are not supported; send text parts and JSON data parts`,
        { part: String(i), kind, mediaType: part.mediaType ?? undefined },
      );
    }
    if (kind === "none" || kind === "several") {
      throw a2aErrors.invalid("a part must carry exactly one of text, raw, url or data", [{
        field: `message.parts.${i}`,
        description: kind === "none" ? "no content member" : "more than one content member",
      }]);
    }
  });
}

/** What a user message brings to a run. */
export interface UserInput {
  /** Native content: text parts as `text`, data parts as `data`, in order. */
  content: NativePart[];
  /** The data parts holding JSON objects, merged into the run's context in order. */
  data: Record<string, unknown>[];
}

/**
 * Maps a message's parts (already checked) to native content and structured input. A data part
 * holds any JSON value (A2A 1.0: `google.protobuf.Value`) and stays on the message as a native
 * `data` part (the model reads it as JSON); an object is also merged into the context, as its keys
 * say where it goes. Arrays, strings, numbers, booleans and null have no key: the message alone
 * carries them.
 */
export function userInput(message: MessageInput): UserInput {
  const content: NativePart[] = [];
  const data: Record<string, unknown>[] = [];
  for (const part of message.parts) {
    if (part.text !== undefined && part.text !== null) {
      content.push({ type: "text", value: part.text });
      continue;
    }
    const value = part.data ?? null;
    content.push({ type: "data", value });
    if (isObject(value)) data.push(value);
  }
  return { content, data };
}

/**
 * The context a run starts with when the message has data parts: the session's current context
 * with each data object merged over it (shallow, in order). Undefined without data parts, so the
 * run keeps the session's context as it is (`context` replaces it when given).
 */
export function mergedContext(
  current: Record<string, unknown> | null,
  data: readonly Record<string, unknown>[],
): Record<string, unknown> | undefined {
  if (data.length === 0) return undefined;
  return Object.assign({}, current ?? {}, ...data);
}

/** The role check: a message to the agent comes from the user (unspecified counts as user). */
export function checkRole(message: MessageInput): void {
  if (message.role === "ROLE_AGENT" || message.role === 2) {
    throw a2aErrors.invalid("a message sent to the agent must have role ROLE_USER", [{
      field: "message.role",
      description: "must be ROLE_USER",
    }]);
  }
}

/** A context id the native API accepts as a session id, or an error saying why not. */
export function contextIdOf(contextId: string, field = "message.contextId"): string {
  const parsed = ClientIdSchema.safeParse(contextId);
  if (!parsed.success) {
    throw a2aErrors.invalid(`contextId '${contextId}' cannot be used by this agent`, [{
      field,
      description: parsed.error.issues[0]?.message ?? "invalid",
    }]);
  }
  return contextId;
}

/**
 * Client-side tools a request offers the agent: native ToolDefinitions in the request's
 * `metadata.tools` (or, failing that, the message's). A call to one makes the task input-required
 * until the client sends the result.
 */
export function clientTools(
  requestMetadata: Record<string, unknown> | null | undefined,
  messageMetadata?: Record<string, unknown> | null,
): ToolDefinition[] {
  const [tools, field] = requestMetadata?.tools != null
    ? [requestMetadata.tools, "metadata.tools"]
    : [messageMetadata?.tools, "message.metadata.tools"];
  if (tools === undefined || tools === null) return [];
  const parsed = (ToolDefinitionSchema.array() as z.ZodType<ToolDefinition[]>).safeParse(tools);
  if (!parsed.success) {
    throw a2aErrors.invalid(
      `${field} must be a list of tool definitions {name, description, parameters}`,
      parsed.error.issues.map((issue) => ({
        field: [field, ...issue.path.map(String)].join("."),
        description: issue.message,
      })),
    );
  }
  return parsed.data;
}

/**
 * The `multitask_strategy` of a send (what it does when its context has a working task): the
 * request's `metadata.multitask_strategy` or, failing that, the message's; undefined when neither
 * says (`reject`).
 */
export function multitaskStrategy(
  requestMetadata: Record<string, unknown> | null | undefined,
  messageMetadata?: Record<string, unknown> | null,
): MultitaskStrategy | undefined {
  const [value, field] = requestMetadata?.multitask_strategy != null
    ? [requestMetadata.multitask_strategy, "metadata.multitask_strategy"]
    : [messageMetadata?.multitask_strategy, "message.metadata.multitask_strategy"];
  if (value === undefined || value === null) return undefined;
  const parsed = MultitaskStrategySchema.safeParse(value);
  if (!parsed.success) {
    throw a2aErrors.invalid(
      `${field} must be one of ${MultitaskStrategySchema.options.join(", ")}`,
      [{ field, description: parsed.error.issues[0]?.message ?? "invalid" }],
    );
  }
  return parsed.data;
}

/** A tool call an interrupted run waits for (read from its `interrupt_payload`). */
export interface PendingCall {
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  kind: "client_tool" | "approval";
}

/** The pending calls of an `interrupt_payload`; malformed entries are dropped. */
export function pendingCalls(payload: Record<string, unknown> | null | undefined): PendingCall[] {
  if (!payload || payload.reason !== "tool_calls" || !Array.isArray(payload.pending)) return [];
  return payload.pending.flatMap((raw): PendingCall[] => {
    if (!isObject(raw)) return [];
    const { tool_call_id, tool_name, arguments: args, kind } = raw;
    if (typeof tool_call_id !== "string" || typeof tool_name !== "string") return [];
    if (kind !== "client_tool" && kind !== "approval") return [];
    return [{ tool_call_id, tool_name, arguments: isObject(args) ? args : {}, kind }];
  });
}

/** The native `resume_payload`. */
export interface ResumePayload {
  tool_results?: { tool_call_id: string; result: unknown; is_error?: boolean }[];
  approvals?: { tool_call_id: string; approved: boolean; reason?: string }[];
}

const YES = new Set(["yes", "y", "approve", "approved", "ok", "okay", "allow", "confirm", "true"]);
const NO = new Set(["no", "n", "reject", "rejected", "deny", "denied", "refuse", "false"]);

/**
 * How a message answers the calls an input-required task waits for:
 *
 * 1. a data part holding `tool_results` and/or `approvals` (the native `resume_payload`; camelCase
 *    `toolResults`, `toolCallId`, `isError` work too) answers calls by id;
 * 2. otherwise, when every pending call is an approval: a data part `{"approved": bool,
 *    "reason"?: string}` or the text `yes` / `no` (also approve, ok / reject, deny, ...) decides
 *    them all;
 * 3. otherwise, when one client-tool call is pending: the message is its result (the lone data
 *    part's value, else the text).
 *
 * Anything else is an InvalidParams error that says what to send.
 */
export function resumeAnswers(
  pending: readonly PendingCall[],
  message: MessageInput,
): ResumePayload {
  const dataParts = message.parts.filter((p) => Object.hasOwn(p, "data"));
  const text = message.parts.map((p) => p.text ?? "").join("").trim();

  for (const part of dataParts) {
    const explicit = explicitResume(part.data);
    if (explicit) return explicit;
  }

  if (pending.every((p) => p.kind === "approval")) {
    let decision: { approved: boolean; reason?: string } | undefined;
    const data = dataParts.length === 1 ? dataParts[0].data : undefined;
    if (isObject(data) && typeof data.approved === "boolean") {
      decision = {
        approved: data.approved,
        ...(typeof data.reason === "string" ? { reason: data.reason } : {}),
      };
    } else if (dataParts.length === 0) {
      const word = text.toLowerCase().replace(/[.!]+$/, "");
      if (YES.has(word)) decision = { approved: true };
      else if (NO.has(word)) decision = { approved: false };
    }
    if (!decision) {
      throw a2aErrors.invalid(
        `the task waits for approval of ${describe(pending)}; answer "yes" or "no", or send a ` +
          `data part {"approved": true|false, "reason": "..."}`,
        [{ field: "message.parts", description: "not an approval decision" }],
      );
    }
    return { approvals: pending.map((p) => ({ tool_call_id: p.tool_call_id, ...decision })) };
  }

  if (pending.length === 1) {
    const result = dataParts.length === 1 && text === "" ? dataParts[0].data : text;
    return { tool_results: [{ tool_call_id: pending[0].tool_call_id, result }] };
  }

  throw a2aErrors.invalid(
    `the task waits for ${describe(pending)}; answer each call by id with a data part ` +
      `{"tool_results": [{"tool_call_id": "...", "result": ...}], ` +
      `"approvals": [{"tool_call_id": "...", "approved": true}]}`,
    [{ field: "message.parts", description: "no answer for the pending tool calls" }],
  );
}

/** A data part in the explicit resume form, normalized to the native shape; else undefined. */
function explicitResume(data: unknown): ResumePayload | undefined {
  if (!isObject(data)) return undefined;
  const results = data.tool_results ?? data.toolResults;
  const approvals = data.approvals;
  if (results === undefined && approvals === undefined) return undefined;
  const out: ResumePayload = {};
  if (results !== undefined) {
    out.tool_results = asList(results, "tool_results").map((r, i) => {
      const id = r.tool_call_id ?? r.toolCallId;
      if (typeof id !== "string" || id === "") throw badEntry(`tool_results.${i}.tool_call_id`);
      const isError = r.is_error ?? r.isError;
      return {
        tool_call_id: id,
        result: r.result ?? null,
        ...(typeof isError === "boolean" ? { is_error: isError } : {}),
      };
    });
  }
  if (approvals !== undefined) {
    out.approvals = asList(approvals, "approvals").map((a, i) => {
      const id = a.tool_call_id ?? a.toolCallId;
      if (typeof id !== "string" || id === "") throw badEntry(`approvals.${i}.tool_call_id`);
      if (typeof a.approved !== "boolean") throw badEntry(`approvals.${i}.approved`);
      return {
        tool_call_id: id,
        approved: a.approved,
        ...(typeof a.reason === "string" ? { reason: a.reason } : {}),
      };
    });
  }
  return out;
}

function asList(value: unknown, field: string): Record<string, unknown>[] {
  if (!Array.isArray(value) || !value.every(isObject)) throw badEntry(field);
  return value as Record<string, unknown>[];
}

function badEntry(field: string) {
  return a2aErrors.invalid(`malformed answer: ${field}`, [{
    field: `message.parts.data.${field}`,
    description: "missing or of the wrong type",
  }]);
}

/** `name({...args})` of each call, for messages. */
export function describe(pending: readonly PendingCall[]): string {
  return pending.map((p) => `${p.tool_name}(${JSON.stringify(p.arguments)}) [${p.tool_call_id}]`)
    .join(", ");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
