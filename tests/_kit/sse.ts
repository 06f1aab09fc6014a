/**
 * The tests' one Server-Sent Events reader, built on `eventsource-parser` (the WHATWG parsing
 * rules): events come out as `{event, data, id, retry}`, comments (keep-alives, end notices) are
 * recorded with their position, and the raw text is kept for assertions on the wire format.
 */
import { createParser, type EventSourceParser } from "eventsource-parser";

/** One dispatched event. `event` and `id` are absent when the frame had no such field. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
  /** The `retry:` value sent with this event (or since the previous one), in ms. */
  retry?: number;
}

/** A comment line (`: text`), and how many events had arrived before it. */
export interface SseComment {
  text: string;
  /** The number of events dispatched before this comment. */
  after: number;
}

/** Reads the SSE body of a response (or any byte stream) event by event. */
export class SseReader implements AsyncIterableIterator<SseEvent>, AsyncDisposable, ParsedSse {
  /** Every comment so far, in order. */
  readonly comments: SseComment[] = [];
  /** Every event so far, in order (also those already handed out by `next`). */
  readonly events: SseEvent[] = [];
  /** Everything received so far, as text. */
  raw = "";
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #queue: SseEvent[] = [];
  readonly #parser: EventSourceParser;
  #done = false;

  /** Reads `source`; a `Response` must have a body. */
  constructor(source: Response | ReadableStream<Uint8Array>) {
    const body = source instanceof Response ? source.body : source;
    if (!body) throw new Error("the response has no body to read events from");
    this.#reader = body.getReader();
    this.#parser = sseParser(this, (event) => this.#queue.push(event));
  }

  /** The next event, or `done` when the stream ended. */
  async next(): Promise<IteratorResult<SseEvent, undefined>> {
    for (;;) {
      const queued = this.#queue.shift();
      if (queued) return { done: false, value: queued };
      if (this.#done) return { done: true, value: undefined };
      const { done, value } = await this.#reader.read();
      if (done) {
        this.#done = true;
        const tail = this.#decoder.decode();
        this.raw += tail;
        this.#parser.feed(tail);
      } else {
        const text = this.#decoder.decode(value, { stream: true });
        this.raw += text;
        this.#parser.feed(text);
      }
    }
  }

  /** Stops reading (cancels the body); what was read stays available. */
  async return(): Promise<IteratorResult<SseEvent, undefined>> {
    await this.cancel();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Cancels the body (a client hanging up). */
  async cancel(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#reader.cancel().catch(() => {});
  }

  /** Cancels the body if it is still open. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.cancel();
  }

  /**
   * Reads on to the next event whose `event` field is `match` (or that `match` accepts) and
   * leaves the stream open; fails when the stream ends first.
   */
  async until(match: string | ((e: SseEvent) => boolean)): Promise<SseEvent> {
    const accept = typeof match === "string" ? (e: SseEvent) => e.event === match : match;
    // next(), not for-await: leaving a for-await loop early would cancel the stream.
    for (let r = await this.next(); !r.done; r = await this.next()) {
      if (accept(r.value)) return r.value;
    }
    throw new Error(`the stream ended before ${typeof match === "string" ? match : "the event"}`);
  }

  /** Reads to the end; returns every event of the stream (also those read before). */
  async all(): Promise<SseEvent[]> {
    while (!(await this.next()).done) { /* to the end */ }
    return this.events;
  }

  /** Reads to the end; returns the JSON `data` of every event of the stream. */
  async json<T = Record<string, unknown>>(): Promise<T[]> {
    return (await this.all()).map((e) => JSON.parse(e.data) as T);
  }
}

/** A reader of the SSE body of `res`. */
export function readSse(res: Response | ReadableStream<Uint8Array>): SseReader {
  return new SseReader(res);
}

/** What a complete SSE text holds. */
export interface ParsedSse {
  events: SseEvent[];
  comments: SseComment[];
}

/** Parses a complete SSE text (e.g. `await res.text()`) by the same rules. */
export function parseSse(text: string): ParsedSse {
  const parsed: ParsedSse = { events: [], comments: [] };
  const parser = sseParser(parsed);
  parser.feed(text);
  // A last frame without its blank line is incomplete and, by the rules, dropped.
  return parsed;
}

/** A parser that appends events and comments to `into` (and hands each event to `onEvent`). */
function sseParser(into: ParsedSse, onEvent?: (event: SseEvent) => void): EventSourceParser {
  let retry: number | undefined;
  return createParser({
    onEvent: (e) => {
      const event: SseEvent = { data: e.data };
      if (e.event !== undefined) event.event = e.event;
      if (e.id !== undefined) event.id = e.id;
      if (retry !== undefined) event.retry = retry;
      retry = undefined;
      into.events.push(event);
      onEvent?.(event);
    },
    onRetry: (ms) => retry = ms,
    onComment: (text) => into.comments.push({ text, after: into.events.length }),
  });
}

/** A native run event as its JSON `data`. */
export type EventData = Record<string, unknown> & { kind: string };

/** Reads a native run stream to the end and returns its events' JSON. */
export function readEvents(res: Response): Promise<EventData[]> {
  return readSse(res).json<EventData>();
}
