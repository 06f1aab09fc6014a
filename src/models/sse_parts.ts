/**
 * A successful SSE body of JSON events read straight into AI SDK stream parts, as the AI SDK's
 * `createEventSourceResponseHandler` and a provider's transform stream do it, without their chain
 * of Web Streams (the body wrapper, `TextDecoderStream`, `EventSourceParserStream`, a parse stream
 * and the transform, each a promise hop per token): one read of the body becomes the parts it
 * holds. The events are split by `eventsource-parser`'s parser (the one the SDK's stream uses),
 * `[DONE]` is skipped, each event's data is parsed and checked by the wire's `parse` and mapped by
 * its `transform` (openai_chat_stream.ts, openai_compatible_stream.ts).
 */
import { APICallError, type LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { isAbortError } from "@ai-sdk/provider-utils";
import { createParser, type EventSourceParser } from "eventsource-parser";
import type { BodyReader } from "./observed_fetch.ts";

type Part = LanguageModelV4StreamPart;

/** The warnings a stream starts with (`stream-start`). */
export type StreamWarnings = Extract<Part, { type: "stream-start" }>["warnings"];

/** A reader of stream parts: what the attempt and the events iterator read. */
export type PartReader = Pick<ReadableStreamDefaultReader<Part>, "read" | "cancel">;

/** A parsed and checked event, or why it is not one (`safeParseJSON`'s result). */
export type ChunkResult<T> = { success: true; value: T } | { success: false; error: Error };

/**
 * What the request was, for the error a failing body read becomes (as the AI SDK's, less the
 * request body: an open stream does not hold a second copy of the conversation for it).
 */
export interface ChatRequestInfo {
  url: string;
  statusCode: number;
  responseHeaders: Record<string, string>;
}

/** Builds a wire's part reader for a successful body, given the SDK's parts for an empty one. */
export type PartsFactory = (
  body: BodyReader,
  sdk: readonly Part[],
  request: ChatRequestInfo,
) => PartReader;

/** The warnings of the SDK's own `stream-start` (the request's: unsupported settings...). */
export function warningsOf(sdk: readonly Part[]): StreamWarnings {
  for (const part of sdk) if (part.type === "stream-start") return part.warnings;
  return [];
}

/** A wire's transform: parts into `out` per checked event, and at the end of the body. */
export interface PartTransform<T> {
  chunk(chunk: ChunkResult<T>): void;
  flush(): void;
}

/**
 * Reads `body` as parts: what `transform` pushes into `queue` (its first parts, such as
 * `stream-start`, already there), event by event, then at the body's end.
 */
export function sseParts<T>(
  body: BodyReader,
  parse: (text: string) => ChunkResult<T> | Promise<ChunkResult<T>>,
  queue: Part[],
  transform: PartTransform<T>,
  request: ChatRequestInfo,
): PartReader {
  let head = 0;
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
      const parsed = parse(pending[i]);
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

  /** `next`, remembering a failure for every later read (`read` checks it first). */
  async function fill(): Promise<ReadableStreamReadResult<Part>> {
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
