/**
 * One event of an OpenAI-compatible Chat Completions stream, parsed and checked the way
 * `@ai-sdk/openai-compatible` checks it (`safeParseJSON` with its chat chunk schema and default
 * error structure): the same JSON parse, the same zod schema (copied from
 * `@ai-sdk/openai-compatible@3.0.92`, `dist/index.js`, `chunkBaseSchema` and
 * `defaultOpenAICompatibleErrorStructure`, which it does not export), the same result or error.
 *
 * `plainCompatibleChunk` recognises the common shape (text or reasoning deltas as strings, finish
 * reasons, usage) by hand and hands the value on as it is: the chunk and usage objects are loose
 * in that schema (unknown keys kept), and the transform reads no key of the strict ones that the
 * check leaves unchecked. Anything else goes through zod.
 */
import { z } from "zod";
import { chunkParser, isRec, type WireError, wireError } from "./openai_wire.ts";

const nullishNumber = z.number().nullish();

const usageObject = z.looseObject({
  prompt_tokens: nullishNumber,
  completion_tokens: nullishNumber,
  total_tokens: nullishNumber,
  prompt_tokens_details: z.looseObject({ cached_tokens: nullishNumber }).nullish(),
  completion_tokens_details: z.looseObject({
    reasoning_tokens: nullishNumber,
    accepted_prediction_tokens: nullishNumber,
    rejected_prediction_tokens: nullishNumber,
  }).nullish(),
}).nullish();

const chunkObject = z.looseObject({
  id: z.string().nullish(),
  created: nullishNumber,
  model: z.string().nullish(),
  choices: z.array(z.object({
    delta: z.object({
      role: z.enum(["assistant", ""]).nullish(),
      content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
      refusal: z.unknown().nullish().transform((value) =>
        typeof value === "string" ? value : undefined
      ),
      reasoning_content: z.string().nullish(),
      reasoning: z.string().nullish(),
      tool_calls: z.array(z.object({
        index: nullishNumber,
        id: z.string().nullish(),
        function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }),
        extra_content: z.object({
          google: z.object({ thought_signature: z.string().nullish() }).nullish(),
        }).nullish(),
      })).nullish(),
    }).nullish(),
    finish_reason: z.string().nullish(),
  })),
  usage: usageObject,
});

/** A checked event: a chunk of the answer, or an error the server streamed. */
export type CompatibleChunk = z.infer<typeof chunkObject> | WireError;

const str = (v: unknown) => v == null || typeof v === "string";
const num = (v: unknown) => v == null || Number.isFinite(v);

function plainUsage(u: unknown): boolean {
  if (u == null) return true;
  if (!isRec(u) || !num(u.prompt_tokens) || !num(u.completion_tokens) || !num(u.total_tokens)) {
    return false;
  }
  const p = u.prompt_tokens_details;
  if (p != null && (!isRec(p) || !num(p.cached_tokens))) return false;
  const c = u.completion_tokens_details;
  return c == null || (isRec(c) && num(c.reasoning_tokens) &&
    num(c.accepted_prediction_tokens) && num(c.rejected_prediction_tokens));
}

/**
 * The chunk, when it has the common shape: string deltas of text, reasoning or a refusal, finish
 * reasons, usage; no tool calls, content parts or error. Undefined for anything else, which zod
 * then checks. Every value accepted here is one zod accepts.
 */
export function plainCompatibleChunk(value: unknown): CompatibleChunk | undefined {
  if (!isRec(value) || "error" in value || !Array.isArray(value.choices)) return undefined;
  if (!str(value.id) || !num(value.created) || !str(value.model)) return undefined;
  if (!plainUsage(value.usage)) return undefined;
  for (const c of value.choices) {
    if (!isRec(c) || !str(c.finish_reason)) return undefined;
    const d = c.delta;
    if (d == null) continue;
    if (
      !isRec(d) || (d.role != null && d.role !== "assistant" && d.role !== "") ||
      !str(d.content) || !str(d.refusal) || !str(d.reasoning_content) || !str(d.reasoning) ||
      d.tool_calls != null
    ) return undefined;
  }
  return value as CompatibleChunk;
}

/**
 * Parses and checks one event's data, as `safeParseJSON({ text, schema })` does: at once for the
 * common shape, through zod (a promise) for the rest.
 */
export const parseCompatibleChunk = chunkParser<CompatibleChunk>(
  plainCompatibleChunk,
  () => z.union([chunkObject, wireError]),
);
