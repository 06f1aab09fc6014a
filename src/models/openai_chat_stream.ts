/**
 * An OpenAI Chat Completions response body read straight into AI SDK stream parts: the parts
 * `@ai-sdk/openai@4.0.118`'s chat model (`doStream`) yields for the same bytes, without its chain
 * of Web Streams (sse_parts.ts; a `tee()` too, here). The chat transform's rules are ported below
 * from the package's `dist/index.js`, with its `StreamingToolCallTracker` and the same check of
 * each event (openai_chat_chunk.ts).
 *
 * The AI SDK still builds and sends the request and judges the response status (attempt.ts);
 * only a successful body comes here. tests/models/sse_parts_test.ts holds both paths to
 * the same parts over the recorded provider streams of tests/models/replay/fixtures/openai/.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { generateId, StreamingToolCallTracker } from "@ai-sdk/provider-utils";
import type { BodyReader } from "./observed_fetch.ts";
import { type ChatChunk, parseChatChunk } from "./openai_chat_chunk.ts";
import { openaiStreamError } from "./openai_stream_error.ts";
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
type Usage = NonNullable<Extract<ChatChunk, { choices: unknown }>["usage"]>;
type Choice = Extract<ChatChunk, { choices: unknown }>["choices"][number];

/** The chat transform's state and rules (`doStream`'s `TransformStream`), one chunk at a time. */
class ChatTransform implements PartTransform<ChatChunk> {
  readonly #out: Part[];
  readonly #tools: StreamingToolCallTracker;
  #finishReason: { unified: string; raw: string | undefined } = {
    unified: "interrupted",
    raw: undefined,
  };
  #usage: Usage | undefined;
  #metadataExtracted = false;
  #isActiveText = false;
  #hasRefusal = false;
  #rawFinishReason: string | undefined;
  #hasLogprobs = false;
  readonly #logprobs: unknown[] = [];
  readonly #providerMetadata: { openai: Record<string, unknown> } = { openai: {} };

  constructor(out: Part[], warnings: StreamWarnings) {
    this.#out = out;
    this.#tools = new StreamingToolCallTracker(
      { enqueue: (part: Part) => out.push(part) },
      { generateId, typeValidation: "if-present" },
    );
    out.push({ type: "stream-start", warnings });
  }

  chunk(chunk: ChunkResult<ChatChunk>): void {
    const out = this.#out;
    if (!chunk.success) {
      this.#finishReason = { unified: "error", raw: undefined };
      this.#rawFinishReason = undefined;
      out.push({ type: "error", error: chunk.error });
      return;
    }
    const value = chunk.value;
    if ("error" in value) {
      this.#finishReason = { unified: "error", raw: undefined };
      this.#rawFinishReason = undefined;
      out.push({ type: "error", error: openaiStreamError(value.error) ?? value.error });
      return;
    }
    if (!this.#metadataExtracted) {
      const part = responseMetadata(value);
      if (part) {
        this.#metadataExtracted = true;
        out.push(part);
      }
    }
    if (value.usage != null) {
      this.#usage = value.usage;
      const details = value.usage.completion_tokens_details;
      if (details?.accepted_prediction_tokens != null) {
        this.#providerMetadata.openai.acceptedPredictionTokens = details.accepted_prediction_tokens;
      }
      if (details?.rejected_prediction_tokens != null) {
        this.#providerMetadata.openai.rejectedPredictionTokens = details.rejected_prediction_tokens;
      }
    }
    const choice: Choice | undefined = value.choices[0];
    if (choice?.finish_reason != null) this.#rawFinishReason = choice.finish_reason;
    if (choice?.logprobs != null) {
      const content = choice.logprobs.content;
      const refusal = choice.logprobs.refusal;
      if (content != null || refusal != null) {
        this.#hasLogprobs = true;
        this.#logprobs.push(...content ?? [], ...refusal ?? []);
      }
    }
    if (choice?.delta == null) return;
    const delta = choice.delta;
    const textDeltas: string[] = [];
    if (delta.content != null && delta.content.length > 0) textDeltas.push(delta.content);
    if (delta.refusal != null && delta.refusal.length > 0) {
      this.#hasRefusal = true;
      textDeltas.push(delta.refusal);
    }
    if (textDeltas.length === 0 && delta.content === "") textDeltas.push(delta.content);
    for (const textDelta of textDeltas) {
      if (!this.#isActiveText) {
        out.push({ type: "text-start", id: "0" });
        this.#isActiveText = true;
      }
      out.push({ type: "text-delta", id: "0", delta: textDelta });
    }
    if (delta.tool_calls != null) {
      for (const toolCallDelta of delta.tool_calls) this.#tools.processDelta(toolCallDelta);
    }
    if (delta.annotations != null) {
      for (const annotation of delta.annotations) {
        out.push({
          type: "source",
          sourceType: "url",
          id: generateId(),
          url: annotation.url_citation.url,
          title: annotation.url_citation.title,
        });
      }
    }
  }

  flush(): void {
    const out = this.#out;
    if (this.#isActiveText) out.push({ type: "text-end", id: "0" });
    this.#tools.flush();
    if (this.#rawFinishReason != null) {
      this.#finishReason = {
        unified: finishReason(this.#rawFinishReason, this.#hasRefusal),
        raw: this.#rawFinishReason,
      };
    }
    if (this.#hasLogprobs) this.#providerMetadata.openai.logprobs = this.#logprobs;
    out.push({
      type: "finish",
      finishReason: this.#finishReason,
      usage: usage(
        this.#usage,
        this.#usage?.prompt_tokens_details?.cache_write_tokens ?? undefined,
      ),
      providerMetadata: this.#providerMetadata,
    } as Part);
  }
}

/**
 * Reads an OpenAI Chat Completions SSE body as AI SDK stream parts, `stream-start` (with the
 * request's `warnings`, from the SDK's own stream of an empty body) first and `finish` last, as
 * the AI SDK chat model's stream does.
 */
export function openaiChatParts(
  body: BodyReader,
  sdk: readonly Part[],
  request: ChatRequestInfo,
): PartReader {
  const out: Part[] = [];
  return sseParts(body, parseChatChunk, out, new ChatTransform(out, warningsOf(sdk)), request);
}
