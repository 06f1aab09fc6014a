/**
 * Reading of the AG-UI add-on's requests: a body validated as the AG-UI `RunAgentInput`
 * (schemas.ts) and its aliases resolved (each field in camelCase or snake_case, not both with
 * different values), keeping the spelling the client used so errors name its fields. What the
 * request becomes natively is request.ts's job; see docs/ag-ui.md.
 */
import type { ModelConfig, MultitaskStrategy, ToolDefinition } from "../../api/schemas.ts";
import type { OnDisconnect } from "../../config/schema/http_server.ts";
import { errors, type FieldError } from "../../errors.ts";
import { fieldError, validate } from "../../http/kit/mod.ts";
import {
  type RawForwardedProps,
  type RawInput,
  type RawMessage,
  type RawToolCall,
  RunAgentInputSchema,
} from "./schemas.ts";

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
  model: ModelConfig | null;
  /** `forwardedProps.on_disconnect`; null when absent (the add-on's default applies). */
  onDisconnect: OnDisconnect | null;
  /** `forwardedProps.multitask_strategy`; null when absent (`reject`). */
  multitaskStrategy: MultitaskStrategy | null;
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
  toolCalls: RawToolCall[] | null;
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
  const [forwarded, forwardedPropsName] = pick<RawForwardedProps>(
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
  const [multitaskStrategy] = forwarded
    ? alias<MultitaskStrategy>(
      forwarded as Record<string, unknown>,
      "multitaskStrategy",
      "multitask_strategy",
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
    multitaskStrategy,
    resume: resume.length > 0 ? resume : null,
    forwardedPropsName,
  };
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
