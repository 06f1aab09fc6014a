/**
 * Server-Sent Events over Web Streams: frames, keep-alive comments, and a hook for the client
 * going away (which the attached run stream turns into a cancellation).
 */
import { clearImmediate, setImmediate } from "node:timers";

/**
 * One SSE frame: an optional `id:` line (the stream cursor, see cursor.ts), an optional `event:`
 * line, one `data:` line, an empty line.
 */
export function sseFrame(data: unknown, event?: string, id?: string): string {
  return sseJsonFrame(JSON.stringify(data), event, id);
}

/** `sseFrame` for data already encoded as JSON (one line). */
export function sseJsonFrame(json: string, event?: string, id?: string): string {
  const head = (id === undefined ? "" : `id: ${id}\n`) + (event ? `event: ${event}\n` : "");
  return `${head}data: ${json}\n\n`;
}

/**
 * A frame whose data is long (`SHARED_FRAME_CHARS` or more) as its head and the rest as UTF-8
 * bytes (the data and the blank line). The bytes are computed once per `key` (an event object
 * that every stream replaying it shares) and written as they are to every stream: 20 streams
 * resuming a run with a 38 MB snapshot encode it once, not 20 times, and hold it once. A shorter
 * frame is one string, as `sseJsonFrame` makes it.
 */
export function sseSharedFrame(key: object, json: string, event?: string, id?: string): SsePiece {
  if (json.length < SHARED_FRAME_CHARS) return sseJsonFrame(json, event, id);
  let bytes = sharedBytes.get(key);
  if (bytes === undefined) {
    bytes = encoder.encode(`${json}\n\n`);
    sharedBytes.set(key, bytes);
  }
  return { head: sseJsonFrame("", event, id).slice(0, -2), bytes };
}

/** Frames' data this long is encoded once for every stream (`sseSharedFrame`). */
export const SHARED_FRAME_CHARS = 64 * 1024;
/** The UTF-8 bytes of long frames' data and end, by what the streams writing them share. */
const sharedBytes = new WeakMap<object, Uint8Array>();

/**
 * A piece of an SSE stream: frames' text, or one frame whose text after `head` is already encoded
 * (`sseSharedFrame`), written as it is and never changed.
 */
export type SsePiece = string | { head: string; bytes: Uint8Array };

/** An SSE comment line (ignored by clients; keeps proxies from closing an idle stream). */
export function sseComment(text: string): string {
  return `: ${text.replaceAll("\n", " ")}\n\n`;
}

/** Options of an SSE response. */
export interface SseOptions {
  /** Milliseconds between keep-alive comments. */
  keepaliveMs: number;
  /** Called once when the client closes the connection before the frames ended. */
  onClientGone?: () => void;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /**
   * Milliseconds a browser's `EventSource` waits before it reconnects (the `retry:` field sent
   * first); set on streams a client can resume with `Last-Event-ID`.
   */
  retryMs?: number;
}

const encoder = new TextEncoder();

/**
 * Characters of frames one chunk of the body holds at most: a burst longer than this (a replay of
 * a long history) goes out in several chunks, so the client's pace still holds its source back.
 */
const CHUNK_CHARS = 64 * 1024;

/** What a frame read raced against: the macrotask after the one that produced the first frame. */
const TURN_ENDED = Symbol("turn ended");

/** The close hooks of the bodies `sseResponse` made, by body (which survives re-wrapping). */
const closeHooks = new WeakMap<ReadableStream<Uint8Array>, (onClose: () => void) => void>();
/** How to end the stream of each body `sseResponse` made with an end notice (`dropSse`). */
const droppers = new WeakMap<
  ReadableStream<Uint8Array>,
  (notice: string, abort: boolean) => void
>();
/** What each body `sseResponse` made holds unpulled, in bytes; null once it ended. */
const holdings = new WeakMap<ReadableStream<Uint8Array>, () => number | null>();

/**
 * Bytes of a long frame enqueued at a time: the rest waits as a view of the shared bytes, so what
 * a stream holds that its consumer has not pulled is measured here under any listener.
 */
const SLICE_BYTES = 64 * 1024;

/**
 * Streams `frames` (already encoded SSE text) as a `text/event-stream` response. Frames are pulled
 * only as fast as the client reads, so a slow reader backs up into its source (a pub/sub
 * subscription drops it at its capacity; an attached run's bounded queue makes the run wait for
 * it, then drops it) instead of into this process's memory. The response ends
 * when the iterable ends; a client disconnect stops the iteration and calls `onClientGone`.
 *
 * The frames a source has ready in one turn of the event loop (a model's burst of tokens, a
 * replayed history) go out as one chunk, one socket write, up to `CHUNK_CHARS`: after a frame,
 * the frames that arrive before the next macrotask join it. So a frame is held back one turn at
 * most, and only frames already produced are taken ahead of the client's reading.
 */
export function sseResponse(frames: AsyncIterable<SsePiece>, options: SseOptions): Response {
  const iterator = frames[Symbol.asyncIterator]();
  let timer: ReturnType<typeof setInterval> | undefined;
  let finished = false;
  // A frame read still unsettled when its turn ended: the next chunk starts with it.
  let pending: Promise<IteratorResult<SsePiece>> | undefined;
  // The text of the chunk being gathered, while a pull gathers one (keep-alives join it).
  let gathering: string | undefined;
  let onClose: (() => void) | undefined;
  // The part of a long frame not enqueued yet, and whether the body closes once it is.
  let rest: Uint8Array | undefined;
  let closeAfterRest = false;
  const stop = () => {
    finished = true;
    rest = undefined;
    if (timer !== undefined) clearInterval(timer);
    const hook = onClose;
    onClose = undefined;
    hook?.();
  };
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const sendRest = (ctrl: ReadableStreamDefaultController<Uint8Array>) => {
    const slice = rest!.subarray(0, SLICE_BYTES);
    rest = rest!.length > SLICE_BYTES ? rest!.subarray(SLICE_BYTES) : undefined;
    ctrl.enqueue(slice);
    if (rest === undefined && closeAfterRest) {
      stop();
      ctrl.close();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      controller = ctrl;
      if (options.retryMs !== undefined) {
        ctrl.enqueue(encoder.encode(`retry: ${Math.round(options.retryMs)}\n\n`));
      }
      timer = setInterval(() => {
        // Never inside a frame; a frame being written says the stream is alive anyway.
        if (rest !== undefined) return;
        if (gathering !== undefined) {
          gathering += sseComment("keep-alive");
          return;
        }
        try {
          ctrl.enqueue(encoder.encode(sseComment("keep-alive")));
        } catch {
          stop();
        }
      }, options.keepaliveMs);
    },
    async pull(controller) {
      if (rest !== undefined) return sendRest(controller);
      let turn: ReturnType<typeof setImmediate> | undefined;
      try {
        const first = await (pending ?? iterator.next());
        pending = undefined;
        if (finished) return;
        if (first.done) {
          stop();
          controller.close();
          return;
        }
        if (typeof first.value !== "string") {
          controller.enqueue(encoder.encode(first.value.head));
          rest = first.value.bytes;
          return;
        }
        gathering = first.value;
        const turnEnded = new Promise<typeof TURN_ENDED>((resolve) => {
          turn = setImmediate(() => resolve(TURN_ENDED));
        });
        let done = false;
        // The encoded rest of a frame that ended the gathering: it follows the text as it is.
        let bytes: Uint8Array | undefined;
        while (gathering.length < CHUNK_CHARS) {
          const read = iterator.next();
          // The race also handles a rejection of a read left pending for a pull that never comes.
          const next = await Promise.race([read, turnEnded]);
          if (finished) return;
          if (next === TURN_ENDED) {
            pending = read;
            break;
          }
          if (next.done) {
            done = true;
            break;
          }
          if (typeof next.value !== "string") {
            gathering += next.value.head;
            bytes = next.value.bytes;
            break;
          }
          gathering += next.value;
        }
        controller.enqueue(encoder.encode(gathering));
        rest = bytes;
        if (done && rest) closeAfterRest = true;
        else if (done) {
          stop();
          controller.close();
        }
      } catch (err) {
        if (finished) return;
        stop();
        const text = (gathering ?? "") + sseComment(`error: ${(err as Error).message}`);
        controller.enqueue(encoder.encode(text));
        controller.close();
      } finally {
        gathering = undefined;
        clearImmediate(turn);
      }
    },
    cancel() {
      if (finished) return;
      stop();
      options.onClientGone?.();
      iterator.return?.();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 1 }));
  droppers.set(body, (notice, abort) => {
    if (finished) return;
    stop();
    // Not the client's doing: the run goes on (an attached run is not cancelled).
    iterator.return?.();
    try {
      // Erroring the body drops what it queued and makes the listener close the connection.
      if (abort) controller?.error(new Error(`stream ended: ${notice}`));
      else {
        controller?.enqueue(encoder.encode(sseComment(`stream ended: ${notice}`)));
        controller?.close();
      }
    } catch { /* already closed */ }
  });
  // The queue's bytes (a high-water mark of 1 byte: pulled only when it is empty) and the rest of
  // the frame being written.
  holdings.set(
    body,
    () => finished ? null : 1 - (controller?.desiredSize ?? 1) + (rest?.length ?? 0),
  );
  closeHooks.set(body, (hook) => {
    if (finished) hook();
    else onClose = hook;
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      ...options.headers,
    },
  });
}

/**
 * Calls `onClose` once when the body of `res`, a response of `sseResponse` (or one re-made with
 * its body), ends, fails or is cancelled; false, never calling it, for any other response. Lets
 * the open-streams gauge follow a stream without passing its body through a stream of its own.
 */
export function onSseClose(res: Response, onClose: () => void): boolean {
  const hook = res.body ? closeHooks.get(res.body) : undefined;
  if (!hook) return false;
  closeHooks.delete(res.body!);
  hook(onClose);
  return true;
}

/**
 * Ends the stream of `res`, a response of `sseResponse`, with the comment `stream ended: <notice>`
 * (its source stopped, `onClientGone` not called); false for any other response. With `abort`,
 * the body fails instead, dropping what it queued: a listener then closes the connection.
 */
export function dropSse(res: Response, notice: string, abort = false): boolean {
  const drop = res.body ? droppers.get(res.body) : undefined;
  if (!drop) return false;
  drop(notice, abort);
  return true;
}

/**
 * Bytes the body of `res`, a response of `sseResponse`, holds that its consumer (the listener)
 * has not pulled yet: its queue and the rest of a long frame. Null once the stream ended, and for
 * any other response.
 */
export function sseHeldBytes(res: Response): number | null {
  const held = res.body ? holdings.get(res.body) : undefined;
  return held ? held() : null;
}

/** Whether `res` is a response of `sseResponse` (or one re-made with its body). */
export function isSse(res: Response): boolean {
  return res.body !== null && droppers.has(res.body);
}

/**
 * `frames` when it yields anything (its first frame read ahead), null when it is empty: a resumed
 * stream with nothing after the client's cursor is answered otherwise (204, or another stream).
 */
export async function nonEmpty<T>(
  frames: AsyncGenerator<T>,
): Promise<AsyncGenerator<T> | null> {
  const first = await frames.next();
  if (first.done) return null;
  return (async function* () {
    yield first.value;
    yield* frames;
  })();
}
