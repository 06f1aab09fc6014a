/**
 * An OpenAI Chat Completions response body read straight into AI SDK stream parts: the parts
 * `@ai-sdk/openai@4.0.118`'s chat model (`doStream`) yields for the same bytes, without its chain
 * of Web Streams (the body wrapper, `TextDecoderStream`, `EventSourceParserStream`, a parse
 * stream, a `tee()` and the chat transform, each a promise hop per token). A paced token cost
 * ~60 µs of CPU and an open stream ~170 KiB in that chain; here one read of the body becomes the
 * parts it holds, decoded, split into events (`eventsource-parser`'s parser, the one the chain
 * uses) and mapped by the chat transform's rules, ported below from its `dist/index.js`.
 *
 * The AI SDK still builds and sends the request and judges the response status (attempt.ts);
 * only a successful body comes here. tests/models/openai_chat_stream_test.ts holds both paths to
 * the same parts over the recorded provider streams of tests/models/replay/fixtures/openai/.
 */
import { APICallError, type LanguageModelV4StreamPart } from "@ai-sdk/provider";
import {
  createLanguageModelResponseMetadata,
  createNullLanguageModelUsage,
  generateId,
  isAbortError,
  StreamingToolCallTracker,
} from "@ai-sdk/provider-utils";
import { createParser, type EventSourceParser } from "eventsource-parser";
import type { BodyReader } from "./observed_fetch.ts";
import { type ChatChunk, type ChunkResult, parseChatChunk } from "./openai_chat_chunk.ts";
import { openaiStreamError } from "./openai_stream_error.ts";

type Part = LanguageModelV4StreamPart;
type Warnings = Extract<Part, { type: "stream-start" }>["warnings"];
type Usage = NonNullable<Extract<ChatChunk, { choices: unknown }>["usage"]>;
type Choice = Extract<ChatChunk, { choices: unknown }>["choices"][number];

/** A reader of stream parts: what the attempt and the events iterator read. */
export type PartReader = Pick<ReadableStreamDefaultReader<Part>, "read" | "cancel">;

/**
 * What the request was, for the error a failing body read becomes (as the AI SDK's, less the
 * request body: an open stream does not hold a second copy of the conversation for it).
 */
export interface ChatRequestInfo {
  url: string;
  statusCode: number;
  responseHeaders: Record<string, string>;
}

function mapFinishReason(finishReason: string, hasRefusal: boolean): string {
  switch (finishReason) {
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

function convertUsage(usage: Usage | undefined) {
  if (usage == null) return createNullLanguageModelUsage();
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const cachedTokens = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWriteTokens = usage.prompt_tokens_details?.cache_write_tokens ?? undefined;
  const reasoningTokens = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens: {
      total: promptTokens,
      noCache: promptTokens - cachedTokens - (cacheWriteTokens ?? 0),
      cacheRead: cachedTokens,
      cacheWrite: cacheWriteTokens,
    },
    outputTokens: {
      total: completionTokens,
      text: Math.max(0, completionTokens - reasoningTokens),
      reasoning: reasoningTokens,
    },
    raw: usage,
  };
}

/** The chat transform's state and rules (`doStream`'s `TransformStream`), one chunk at a time. */
class ChatTransform {
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

  constructor(out: Part[], warnings: Warnings) {
    this.#out = out;
    this.#tools = new StreamingToolCallTracker(
      { enqueue: (part: Part) => out.push(part) },
      { generateId, typeValidation: "if-present" },
    );
    out.push({ type: "stream-start", warnings });
  }

  chunk(chunk: ChunkResult): void {
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
      const metadata = createLanguageModelResponseMetadata({
        id: value.id ?? undefined,
        model: value.model ?? undefined,
        created: value.created || undefined,
      });
      if (Object.values(metadata).some(Boolean)) {
        this.#metadataExtracted = true;
        out.push({ type: "response-metadata", ...metadata });
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
        unified: mapFinishReason(this.#rawFinishReason, this.#hasRefusal),
        raw: this.#rawFinishReason,
      };
    }
    if (this.#hasLogprobs) this.#providerMetadata.openai.logprobs = this.#logprobs;
    out.push({
      type: "finish",
      finishReason: this.#finishReason,
      usage: convertUsage(this.#usage),
      providerMetadata: this.#providerMetadata,
    } as Part);
  }
}

/**
 * Reads an OpenAI Chat Completions SSE body as AI SDK stream parts, `stream-start` (with the
 * request's `warnings`) first and `finish` last, as the AI SDK chat model's stream does.
 */
export function openaiChatParts(
  body: BodyReader,
  warnings: Warnings,
  request: ChatRequestInfo,
): PartReader {
  const queue: Part[] = [];
  let head = 0;
  const transform = new ChatTransform(queue, warnings);
  const pending: string[] = [];
  const parser: EventSourceParser = createParser({
    onEvent: ({ data }) => {
      if (data !== "[DONE]") pending.push(data);
    },
  });
  const decoder = new TextDecoder();
  let ended = false;
  let cancelled = false;
  /** What failed the stream: every later read fails with it, as an errored stream's do. */
  let failure: { error: unknown } | undefined;

  /** Maps the events the parser has completed; zod's checks (rare) are awaited in order. */
  async function drain(): Promise<void> {
    for (let i = 0; i < pending.length; i++) {
      const parsed = parseChatChunk(pending[i]);
      transform.chunk(parsed instanceof Promise ? await parsed : parsed);
    }
    pending.length = 0;
  }

  function take(): ReadableStreamReadResult<Part> | undefined {
    if (head < queue.length) {
      const value = queue[head++];
      if (head === queue.length) queue.length = head = 0;
      return { done: false, value };
    }
    if (ended) return { done: true, value: undefined };
    return undefined;
  }

  async function fill(): Promise<ReadableStreamReadResult<Part>> {
    if (failure) throw failure.error;
    try {
      return await next();
    } catch (error) {
      failure = { error };
      ended = true;
      queue.length = head = 0;
      throw error;
    }
  }

  async function next(): Promise<ReadableStreamReadResult<Part>> {
    for (;;) {
      const ready = take();
      if (ready) return ready;
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await body.read();
      } catch (error) {
        if (isAbortError(error)) throw error;
        throw new APICallError({
          message: "Failed to process successful response",
          cause: error,
          requestBodyValues: undefined,
          ...request,
        });
      }
      if (cancelled) {
        ended = true;
        queue.length = head = 0;
        continue;
      }
      if (read.done) {
        // No `reset({ consume: true })`: the SDK's parser stream drops an event left unfinished.
        parser.feed(decoder.decode());
        await drain();
        transform.flush();
        ended = true;
        continue;
      }
      parser.feed(decoder.decode(read.value, { stream: true }));
      await drain();
    }
  }

  return {
    read() {
      if (failure) return Promise.reject(failure.error);
      const ready = take();
      return ready ? Promise.resolve(ready) : fill();
    },
    cancel(reason) {
      cancelled = true;
      ended = true;
      queue.length = head = 0;
      return body.cancel(reason);
    },
  };
}
