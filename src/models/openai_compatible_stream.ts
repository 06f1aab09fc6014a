/**
 * An OpenAI-compatible Chat Completions response body (vLLM, Ollama, DeepSeek, Groq, Mistral...)
 * read straight into AI SDK stream parts: the parts `@ai-sdk/openai-compatible@3.0.92`'s chat
 * model (`doStream`) yields for the same bytes, without its chain of Web Streams (sse_parts.ts).
 * Its transform's rules (text and reasoning blocks, content parts, tool-call deltas held until
 * their name arrives, Gemini thought signatures on calls, the finish) are ported below from the
 * package's `dist/index.js`; events are checked as it checks them (openai_compatible_chunk.ts).
 *
 * The AI SDK still builds and sends the request and judges the response status (attempt.ts).
 * tests/models/sse_parts_test.ts holds both paths to the same parts over the
 * recorded OpenAI-wire streams of tests/models/replay/fixtures/openai/.
 */
import { InvalidResponseDataError, type LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateId, StreamingToolCallTracker } from "@ai-sdk/provider-utils";
import type { BodyReader } from "./observed_fetch.ts";
import { type CompatibleChunk, parseCompatibleChunk } from "./openai_compatible_chunk.ts";
import { finishReason, responseMetadata, usage } from "./openai_wire.ts";
import {
  type ChatRequestInfo,
  type ChunkResult,
  type PartReader,
  type PartTransform,
  sseParts,
  type StreamWarnings,
  warningsOf,
} from "./sse_parts.ts";

type Part = LanguageModelV4StreamPart;
type Chunk = Extract<CompatibleChunk, { choices: unknown }>;
type Usage = NonNullable<Chunk["usage"]>;
type Delta = NonNullable<Chunk["choices"][number]["delta"]>;
type ToolCallDelta = NonNullable<Delta["tool_calls"]>[number];

/** The two kinds of streamed block, and the one id the SDK gives each. */
type BlockKind = "text" | "reasoning";
const BLOCK_ID: Record<BlockKind, string> = { text: "txt-0", reasoning: "reasoning-0" };

/** The text and reasoning of a delta's `content`: a string, or content parts. */
function contentParts(content: Delta["content"]): { type: BlockKind; text: string }[] {
  if (content == null) return [];
  if (typeof content === "string") {
    return content.length > 0 ? [{ type: "text", text: content }] : [];
  }
  const result: { type: BlockKind; text: string }[] = [];
  for (const part of content as Record<string, unknown>[]) {
    if (part.type === "text" && typeof part.text === "string") {
      if (part.text.length > 0) result.push({ type: "text", text: part.text });
    } else if (part.type === "thinking" && Array.isArray(part.thinking)) {
      const text = part.thinking
        .filter((c) =>
          c != null && typeof c === "object" && "type" in c && c.type === "text" && "text" in c &&
          typeof c.text === "string"
        )
        .map((c) => c.text).join("");
      if (text.length > 0) result.push({ type: "reasoning", text });
    }
  }
  return result;
}

/** A tool call whose name has not arrived: its id and arguments so far. */
interface PendingCall {
  id: string | null;
  bufferedArguments: string;
  extraContent: ToolCallDelta["extra_content"] | null;
}

/** The chat transform's state and rules (`doStream`'s `TransformStream`), one chunk at a time. */
class CompatibleTransform implements PartTransform<CompatibleChunk> {
  readonly #out: Part[];
  readonly #key: string;
  readonly #tools: StreamingToolCallTracker<ToolCallDelta>;
  readonly #pending = new Map<number, PendingCall>();
  readonly #forwarded = new Set<number>();
  #finishReason: { unified: string; raw: string | undefined } | undefined;
  #rawFinishReason: string | undefined;
  #usage: Usage | undefined;
  #metadataExtracted = false;
  /** The text or reasoning block open now: one at a time, a delta of the other ends it. */
  #open: BlockKind | undefined;
  #hasRefusal = false;

  constructor(out: Part[], warnings: StreamWarnings, key: string) {
    this.#out = out;
    this.#key = key;
    this.#tools = new StreamingToolCallTracker<ToolCallDelta>(
      { enqueue: (part: Part) => out.push(part) },
      {
        generateId,
        extractMetadata: (delta: ToolCallDelta) => {
          const thoughtSignature = delta.extra_content?.google?.thought_signature;
          return thoughtSignature ? { [key]: { thoughtSignature } } : undefined;
        },
        buildToolCallProviderMetadata: (metadata) => metadata,
      },
    );
    out.push({ type: "stream-start", warnings });
  }

  #toolCallDelta(delta: ToolCallDelta): void {
    const index = delta.index;
    if (index == null || this.#forwarded.has(index)) {
      this.#tools.processDelta(delta);
      return;
    }
    let pending = this.#pending.get(index);
    if (pending == null) {
      pending = {
        id: delta.id ?? null,
        bufferedArguments: "",
        extraContent: delta.extra_content ?? null,
      };
      this.#pending.set(index, pending);
    } else {
      if (pending.id == null && delta.id != null) pending.id = delta.id;
      if (pending.extraContent == null && delta.extra_content != null) {
        pending.extraContent = delta.extra_content;
      }
    }
    const argumentsDelta = delta.function?.arguments;
    if (argumentsDelta != null) pending.bufferedArguments += argumentsDelta;
    const name = delta.function?.name;
    if (name != null) {
      this.#tools.processDelta({
        index,
        id: pending.id,
        function: { name, arguments: pending.bufferedArguments },
        extra_content: pending.extraContent ?? undefined,
      });
      this.#pending.delete(index);
      this.#forwarded.add(index);
    }
  }

  /** Ends the open block, if any. */
  #end(): void {
    if (this.#open) this.#out.push({ type: `${this.#open}-end`, id: BLOCK_ID[this.#open] });
    this.#open = undefined;
  }

  /** A delta of a `kind` block, the other ended and this one started first when needed. */
  #delta(kind: BlockKind, delta: string): void {
    if (this.#open !== kind) {
      this.#end();
      this.#out.push({ type: `${kind}-start`, id: BLOCK_ID[kind] });
      this.#open = kind;
    }
    this.#out.push({ type: `${kind}-delta`, id: BLOCK_ID[kind], delta });
  }

  chunk(chunk: ChunkResult<CompatibleChunk>): void {
    const out = this.#out;
    if (!chunk.success) {
      this.#finishReason = { unified: "error", raw: undefined };
      this.#rawFinishReason = undefined;
      out.push({ type: "error", error: chunk.error });
      return;
    }
    if ("error" in chunk.value) {
      this.#finishReason = { unified: "error", raw: undefined };
      this.#rawFinishReason = undefined;
      out.push({ type: "error", error: chunk.value.error });
      return;
    }
    const value = chunk.value;
    if (!this.#metadataExtracted) {
      const part = responseMetadata(value);
      if (part) {
        this.#metadataExtracted = true;
        out.push(part);
      }
    }
    if (value.usage != null) this.#usage = value.usage;
    const choice = value.choices[0];
    if (choice?.finish_reason != null) this.#rawFinishReason = choice.finish_reason;
    if (choice?.delta == null) return;
    const delta = choice.delta;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) this.#delta("reasoning", reasoning);
    for (const part of contentParts(delta.content)) this.#delta(part.type, part.text);
    const refusal = delta.refusal;
    if (refusal != null && refusal.length > 0) {
      this.#hasRefusal = true;
      this.#delta("text", refusal);
    }
    if (delta.tool_calls != null && delta.tool_calls.length > 0) {
      if (this.#open === "reasoning") this.#end();
      for (const call of delta.tool_calls) this.#toolCallDelta(call);
    }
  }

  flush(): void {
    const out = this.#out;
    this.#end();
    for (const [index, pending] of this.#pending) {
      this.#tools.processDelta({
        index,
        id: pending.id,
        function: { arguments: pending.bufferedArguments },
      });
    }
    this.#pending.clear();
    this.#tools.flush();
    if (this.#rawFinishReason != null) {
      this.#finishReason = {
        unified: finishReason(this.#rawFinishReason, this.#hasRefusal),
        raw: this.#rawFinishReason,
      };
    }
    if (this.#finishReason == null) {
      this.#finishReason = { unified: "error", raw: undefined };
      out.push({
        type: "error",
        error: new InvalidResponseDataError({
          data: undefined,
          message: "Response stream ended without a finish reason.",
        }),
      });
    }
    const metadata: Record<string, unknown> = {};
    const details = this.#usage?.completion_tokens_details;
    if (details?.accepted_prediction_tokens != null) {
      metadata.acceptedPredictionTokens = details.accepted_prediction_tokens;
    }
    if (details?.rejected_prediction_tokens != null) {
      metadata.rejectedPredictionTokens = details.rejected_prediction_tokens;
    }
    out.push({
      type: "finish",
      finishReason: this.#finishReason,
      usage: usage(this.#usage),
      providerMetadata: { [this.#key]: metadata },
    } as Part);
  }
}

/** The key the SDK's finish puts its provider metadata under (`openaiCompatible` for ours). */
function metadataKeyOf(sdk: readonly Part[]): string {
  for (const part of sdk) {
    if (part.type === "finish" && part.providerMetadata) {
      const key = Object.keys(part.providerMetadata)[0];
      if (key) return key;
    }
  }
  return "openaiCompatible";
}

/**
 * Reads an OpenAI-compatible Chat Completions SSE body as AI SDK stream parts, `stream-start`
 * (with the request's warnings) first and `finish` last, as the AI SDK chat model's stream does.
 * `sdk` is the SDK's own stream of an empty body: its warnings and its metadata key.
 */
export function openaiCompatibleParts(
  body: BodyReader,
  sdk: readonly Part[],
  request: ChatRequestInfo,
): PartReader {
  const out: Part[] = [];
  const transform = new CompatibleTransform(out, warningsOf(sdk), metadataKeyOf(sdk));
  return sseParts(body, parseCompatibleChunk, out, transform, request);
}
