/**
 * What the two OpenAI-wire readers (openai_chat_stream.ts for `openai`, openai_compatible_stream.ts
 * for `openai-compatible`) do alike, as `@ai-sdk/openai@4.0.118` and
 * `@ai-sdk/openai-compatible@3.0.92` both do it: an event's data parsed and checked (a hand check
 * of the common shape, else the provider's zod schema), the response metadata of the first chunk
 * that has some, the finish reason and the usage in the SDK's terms.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { JSONParseError } from "@ai-sdk/provider";
import {
  createLanguageModelResponseMetadata,
  createNullLanguageModelUsage,
  type FlexibleSchema,
  safeValidateTypes,
  secureJsonParse,
  zodSchema,
} from "@ai-sdk/provider-utils";
import { z, type ZodType } from "zod";
import type { ChunkResult } from "./sse_parts.ts";

type Part = LanguageModelV4StreamPart;

/** An error event, as both providers' schemas check it (`openaiErrorDataSchema`, and the default
 * error structure of openai-compatible). */
export const wireError = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().nullish(),
    param: z.any().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
  }),
});

/** An error event, checked. */
export type WireError = z.infer<typeof wireError>;

/** A JSON object (not an array). */
export type Rec = Record<string, unknown>;

/** Whether `v` is a JSON object (not an array, not null). */
export const isRec = (v: unknown): v is Rec =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The parser of a wire's events, as `safeParseJSON({ text, schema })` parses them: the same JSON
 * parse (prototype poisoning refused), then `plain` (the common shape, checked by hand: every
 * value it accepts, zod accepts) at once, or the zod schema (built on first use, a promise).
 */
export function chunkParser<T>(
  plain: (value: unknown) => T | undefined,
  schema: () => ZodType<T>,
): (text: string) => ChunkResult<T> | Promise<ChunkResult<T>> {
  let checked: FlexibleSchema<T> | undefined;
  return (text) => {
    let value: unknown;
    try {
      value = secureJsonParse(text);
    } catch (cause) {
      return { success: false, error: new JSONParseError({ text, cause }) };
    }
    const fast = plain(value);
    if (fast) return { success: true, value: fast };
    checked ??= zodSchema(schema());
    return safeValidateTypes({ value, schema: checked });
  };
}

/** The `response-metadata` part of a chunk, or undefined when it has none to give. */
export function responseMetadata(
  chunk: { id?: string | null; model?: string | null; created?: number | null },
): Part | undefined {
  const metadata = createLanguageModelResponseMetadata({
    id: chunk.id ?? undefined,
    model: chunk.model ?? undefined,
    created: chunk.created || undefined,
  });
  return Object.values(metadata).some(Boolean)
    ? { type: "response-metadata", ...metadata }
    : undefined;
}

/** The unified finish reason of a raw one. */
export function finishReason(raw: string, hasRefusal: boolean): string {
  switch (raw) {
    case "stop":
      return hasRefusal ? "content-filter" : "stop";
    case "length":
      return "length";
    case "content_filter":
      return "content-filter";
    case "function_call":
    case "tool_calls":
      return "tool-calls";
    default:
      return "other";
  }
}

/** A wire's usage object (the fields both providers read). */
export interface WireUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

/**
 * The usage in the SDK's terms. `cacheWrite` is `openai`'s `cache_write_tokens` (left out of
 * `noCache`); `openai-compatible` reports none.
 */
export function usage(value: WireUsage | undefined, cacheWrite?: number) {
  if (value == null) return createNullLanguageModelUsage();
  const promptTokens = value.prompt_tokens ?? 0;
  const completionTokens = value.completion_tokens ?? 0;
  const cachedTokens = value.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoningTokens = value.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: {
      total: promptTokens,
      noCache: promptTokens - cachedTokens - (cacheWrite ?? 0),
      cacheRead: cachedTokens,
      cacheWrite,
    },
    outputTokens: {
      total: completionTokens,
      text: Math.max(0, completionTokens - reasoningTokens),
      reasoning: reasoningTokens,
    },
    raw: value,
  };
}
