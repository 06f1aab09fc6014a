/**
 * One event of an OpenAI Chat Completions stream, parsed and checked the way `@ai-sdk/openai`
 * checks it (`safeParseJSON` with its `openaiChatChunkSchema`): the same JSON parse (prototype
 * poisoning refused), the same zod schema, the same result or error. The schema below is that
 * schema, copied from `@ai-sdk/openai@4.0.118` (`dist/index.js`, `openaiChatChunkSchema` and
 * `openaiErrorDataSchema`), which does not export it.
 *
 * Most events of a stream are a text delta; checking each of them with zod cost a paced token
 * ~3 µs. `plainChunk` recognises that common shape by hand (without copying it); anything else
 * goes through zod.
 */
import { z } from "zod";
import { chunkParser, isRec, type Rec, type WireError, wireError } from "./openai_wire.ts";

const tokenLogprobs = z.array(z.object({
  token: z.string(),
  logprob: z.number(),
  top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number() })),
})).nullish();

const chunkObject = z.object({
  id: z.string().nullish(),
  created: z.number().nullish(),
  model: z.string().nullish(),
  choices: z.array(z.object({
    delta: z.object({
      role: z.enum(["assistant"]).nullish(),
      content: z.string().nullish(),
      refusal: z.string().nullish(),
      tool_calls: z.array(z.object({
        index: z.number(),
        id: z.string().nullish(),
        type: z.literal("function").nullish(),
        function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }),
      })).nullish(),
      annotations: z.array(z.object({
        type: z.literal("url_citation"),
        url_citation: z.object({
          start_index: z.number(),
          end_index: z.number(),
          url: z.string(),
          title: z.string(),
        }),
      })).nullish(),
    }).nullish(),
    logprobs: z.object({ content: tokenLogprobs, refusal: tokenLogprobs }).nullish(),
    finish_reason: z.string().nullish(),
    index: z.number(),
  })),
  usage: z.object({
    prompt_tokens: z.number().nullish(),
    completion_tokens: z.number().nullish(),
    total_tokens: z.number().nullish(),
    prompt_tokens_details: z.object({
      cached_tokens: z.number().nullish(),
      cache_write_tokens: z.number().nullish(),
    }).nullish(),
    completion_tokens_details: z.object({
      reasoning_tokens: z.number().nullish(),
      accepted_prediction_tokens: z.number().nullish(),
      rejected_prediction_tokens: z.number().nullish(),
    }).nullish(),
  }).nullish(),
});

/** A checked event: a chunk of the answer, or an error the provider streamed. */
export type ChatChunk = z.infer<typeof chunkObject> | WireError;

/** Null, absent, or of `type` (a finite number: zod refuses the Infinity a JSON `1e999` gives). */
const nullish = (v: unknown, type: "string" | "number") =>
  v == null || (type === "number" ? Number.isFinite(v) : typeof v === type);

/** The keys of `keys` that `from` has, as zod's object parse keeps them. */
function pick(from: Rec, keys: readonly string[]): Rec {
  const out: Rec = {};
  for (const key of keys) if (key in from) out[key] = from[key];
  return out;
}

const USAGE_KEYS = ["prompt_tokens", "completion_tokens", "total_tokens"] as const;
const PROMPT_DETAIL_KEYS = ["cached_tokens", "cache_write_tokens"] as const;
const COMPLETION_DETAIL_KEYS = [
  "reasoning_tokens",
  "accepted_prediction_tokens",
  "rejected_prediction_tokens",
] as const;

/** A usage object of numbers only, as zod's parse returns it; undefined when it is not one. */
function plainUsage(u: unknown): Rec | null | undefined {
  if (u === null) return null;
  if (!isRec(u) || !USAGE_KEYS.every((k) => nullish(u[k], "number"))) return undefined;
  const out = pick(u, USAGE_KEYS);
  const details = [
    ["prompt_tokens_details", PROMPT_DETAIL_KEYS],
    ["completion_tokens_details", COMPLETION_DETAIL_KEYS],
  ] as const;
  for (const [key, keys] of details) {
    if (!(key in u)) continue;
    const d = u[key];
    if (d == null) out[key] = d;
    else if (isRec(d) && keys.every((k) => nullish(d[k], "number"))) out[key] = pick(d, keys);
    else return undefined;
  }
  return out;
}

/**
 * The chunk, when it has the common shape: text (or a refusal) deltas, finish reasons, usage; no
 * tool calls, annotations, logprobs or error. Undefined for anything else, which zod then checks.
 * Every value accepted here is one zod accepts. It is handed on as parsed, but for its usage, cut
 * to the keys zod keeps: the one value of a chunk the parts carry on whole (`finish`'s raw usage).
 * The transform reads no other key that zod would have dropped.
 */
export function plainChunk(value: unknown): ChatChunk | undefined {
  if (!isRec(value) || "error" in value || !Array.isArray(value.choices)) return undefined;
  if (
    !nullish(value.id, "string") || !nullish(value.created, "number") ||
    !nullish(value.model, "string")
  ) return undefined;
  for (const c of value.choices) {
    if (
      !isRec(c) || !Number.isFinite(c.index) || !nullish(c.finish_reason, "string") ||
      c.logprobs != null
    ) return undefined;
    const d = c.delta;
    if (
      d != null && (
        !isRec(d) || (d.role != null && d.role !== "assistant") ||
        !nullish(d.content, "string") || !nullish(d.refusal, "string") ||
        d.tool_calls != null || d.annotations != null
      )
    ) return undefined;
  }
  if ("usage" in value) {
    const usage = plainUsage(value.usage);
    if (usage === undefined) return undefined;
    value.usage = usage;
  }
  return value as ChatChunk;
}

/**
 * Parses and checks one event's data, as `safeParseJSON({ text, schema })` does: at once for the
 * common shape, through zod (a promise) for the rest.
 */
export const parseChatChunk = chunkParser<ChatChunk>(
  plainChunk,
  () => z.union([chunkObject, wireError]),
);
