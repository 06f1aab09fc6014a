/**
 * Server-Sent Events over Web Streams: frames, keep-alive comments, and a hook for the client
 * going away (which the attached run stream turns into a cancellation).
 */

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
 * Streams `frames` (already encoded SSE text) as a `text/event-stream` response. Frames are pulled
 * only as fast as the client reads, so a slow reader backs up into its source (a pub/sub
 * subscription drops it at its capacity; an attached run's bounded queue makes the run wait for
 * it, then drops it) instead of into this process's memory. The response ends
 * when the iterable ends; a client disconnect stops the iteration and calls `onClientGone`.
 */
export function sseResponse(frames: AsyncIterable<string>, options: SseOptions): Response {
  const iterator = frames[Symbol.asyncIterator]();
  let timer: ReturnType<typeof setInterval> | undefined;
  let finished = false;
  const stop = () => {
    finished = true;
    if (timer !== undefined) clearInterval(timer);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (options.retryMs !== undefined) {
        controller.enqueue(encoder.encode(`retry: ${Math.round(options.retryMs)}\n\n`));
      }
      timer = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(sseComment("keep-alive")));
        } catch {
          stop();
        }
      }, options.keepaliveMs);
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (finished) return;
        if (next.done) {
          stop();
          controller.close();
        } else {
          controller.enqueue(encoder.encode(next.value));
        }
      } catch (err) {
        if (finished) return;
        stop();
        controller.enqueue(encoder.encode(sseComment(`error: ${(err as Error).message}`)));
        controller.close();
      }
    },
    cancel() {
      if (finished) return;
      stop();
      options.onClientGone?.();
      iterator.return?.();
    },
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
 * `frames` when it yields anything (its first frame read ahead), null when it is empty: a resumed
 * stream with nothing after the client's cursor is answered otherwise (204, or another stream).
 */
export async function nonEmpty(
  frames: AsyncGenerator<string>,
): Promise<AsyncGenerator<string> | null> {
  const first = await frames.next();
  if (first.done) return null;
  return (async function* () {
    yield first.value;
    yield* frames;
  })();
}
