/**
 * What a run did step by step (`GET /v1/runs/{run_id}/steps`): each step's timing; for a model
 * step, the time to its first token and, with `runtime.record_model_requests`, the request as the
 * provider received it (secrets masked, bounded in bytes); for a tool step, each server tool call
 * with its arguments, result and duration. Tokens and finish reasons are on the run record
 * (`model_steps`), joined by step number.
 */
import { z } from "zod";

/** Bytes of a model request's body kept per step; a longer body is cut and marked `truncated`. */
export const MAX_REQUEST_BYTES = 65_536;

/** Bytes of a tool call's arguments, and of its result, kept per call. */
export const MAX_TOOL_VALUE_BYTES = 16_384;

/** Emits of a tool call kept (the first ones), and bytes of each one's value. */
export const MAX_EMITS = 50;
export const MAX_EMIT_BYTES = 1_024;

/** A model request as the provider received it. */
export const SentRequestSchema = z.object({
  url: z.string().optional().describe(
    "The URL the request went to (absent for a provider that makes no HTTP request: `echo`).",
  ),
  method: z.string().optional().describe("The HTTP method."),
  headers: z.record(z.string(), z.string()).optional().describe(
    "The request headers; credentials (authorization, API keys, cookies) read `****`.",
  ),
  body: z.unknown().describe(
    "The body as JSON (system prompt, messages, tools, settings as the provider's API spells " +
      "them); for `echo`, the AI SDK call it received. When `truncated`, the first " +
      "`MAX_REQUEST_BYTES` (65,536) bytes of its text, as a string.",
  ),
  bytes: z.number().int().nonnegative().describe("The body's whole size in bytes."),
  truncated: z.boolean().describe("Whether `body` was cut to the size limit."),
}).meta({
  id: "SentRequest",
  description: "A model request as the provider received it. Every secret value of the " +
    "configuration and environment reads `[redacted]`, credential headers `****`.",
});

/** A value kept within `MAX_TOOL_VALUE_BYTES`. */
const ToolValue = z.unknown();

/** One server tool call of a tool step. */
export const ToolCallTraceSchema = z.object({
  tool_call_id: z.string().describe("The call's id."),
  tool_name: z.string().describe("The tool called."),
  arguments: ToolValue.describe(
    "The call's arguments; over 16,384 bytes of JSON, its first bytes as a string.",
  ),
  result: ToolValue.describe(
    "What the tool returned (the tool message's value); over 16,384 bytes of JSON, its first " +
      "bytes as a string.",
  ),
  is_error: z.boolean().describe("Whether the call failed."),
  started_at: z.string().describe("When the call started (RFC 3339)."),
  duration_ms: z.number().nonnegative().describe("Milliseconds the call took."),
  emits: z.array(z.object({
    name: z.string().describe("The emit's name."),
    value: z.unknown().describe(
      "Its value; over 1,024 bytes of JSON, its first bytes as a string.",
    ),
  })).optional().describe(
    "What the call emitted (`custom` events), the first 50; absent when it emitted nothing.",
  ),
}).meta({ id: "ToolCallTrace", description: "A server tool call: its input, output and time." });

/** One step of a run. */
export const RunStepSchema = z.object({
  step: z.number().int().describe(
    "The step's number (as in `step_started` events and `model_steps`).",
  ),
  kind: z.enum(["model", "tools"]).describe("A model call, or the tool calls it asked for."),
  attempt: z.number().int().min(1).describe("The attempt of the run that made the step."),
  started_at: z.string().describe("When the step started (RFC 3339)."),
  duration_ms: z.number().nonnegative().describe("Milliseconds the step took."),
  provider: z.string().optional().describe("A model step's provider."),
  model: z.string().optional().describe("A model step's model."),
  first_token_ms: z.number().nonnegative().nullable().optional().describe(
    "A model step's milliseconds from its request to the first output (text, reasoning or a " +
      "tool call); null when none came.",
  ),
  request: SentRequestSchema.nullable().optional().describe(
    "A model step's request as the provider received it; null unless " +
      "`runtime.record_model_requests` is on (it is under `serve --watch`).",
  ),
  tool_calls: z.array(ToolCallTraceSchema).optional().describe(
    "A tool step's server tool calls, in call order.",
  ),
  error: z.object({
    code: z.string().describe("The run's error code (`model_http_error`, ...)."),
    message: z.string().describe("What went wrong (secrets redacted)."),
  }).optional().describe(
    "Why the run failed in this step, when it did (the run's `error`); a model step that " +
      "failed keeps the request the provider refused.",
  ),
}).meta({ id: "RunStep", description: "What one step of a run did, and when." });

/** `GET /v1/runs/{run_id}/steps`. */
export const RunStepListSchema = z.object({
  data: z.array(RunStepSchema).describe("The run's steps, in order; a resumed step per attempt."),
}).meta({ id: "RunStepList", description: "The steps of a run." });

export type SentRequest = z.infer<typeof SentRequestSchema>;
export type ToolCallTrace = z.infer<typeof ToolCallTraceSchema>;
export type RunStep = z.infer<typeof RunStepSchema>;

/**
 * `value` if its JSON is within `maxBytes`, else the first `maxBytes` bytes of that JSON as a
 * string (cut on a character boundary), with whether it was cut and its whole size.
 */
export function boundedJson(
  value: unknown,
  maxBytes: number,
): { value: unknown; truncated: boolean; bytes: number } {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null";
  return boundedText(text, maxBytes, value);
}

/** `text` (or `whole` when given) within `maxBytes` of UTF-8, else its cut prefix. */
export function boundedText(
  text: string,
  maxBytes: number,
  whole: unknown = text,
): { value: unknown; truncated: boolean; bytes: number } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { value: whole, truncated: false, bytes: bytes.length };
  // A cut inside a character drops that character (fatal: false would leave U+FFFD).
  let end = maxBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  const cut = new TextDecoder().decode(bytes.subarray(0, end));
  return { value: cut, truncated: true, bytes: bytes.length };
}
