/**
 * The Upstash transport's subscriptions: Upstash's streaming endpoint
 * `POST <url>/subscribe/<channel>` (server-sent events) read with `fetch` directly, on the same
 * wire format as `@upstash/redis`'s `redis.subscribe()`. That client's subscriber (1.39) cannot
 * serve here: it never reports the end of a stream (its reader loop just stops; errors go to
 * `console.error`), gives no signal when the subscription is active (only a `subscribe` event we
 * would have to wait for anyway), and retries a failed connect five times with backoff. A stream
 * that ended silently would leave a reattached client hanging forever instead of receiving
 * `transport_lost`.
 */
import { messageOf, PubSubError } from "./errors.ts";
import type { BufferedSubscription } from "./subscription.ts";

// A subscription stream line longer than this is not an Upstash frame; stop reading it.
const MAX_LINE = 16 * 1024 * 1024;

/** Where the stream is opened, and where a lost one is reported. */
export interface StreamOptions {
  /** The REST URL, without a trailing slash. */
  url: string;
  /** The REST token (sent as `Authorization: Bearer <token>`). */
  token: string;
  /** Receives a stream lost after it was confirmed. */
  onError: (err: unknown) => void;
}

/**
 * Opens the subscription stream of the channel `name` and feeds `sub` from it; resolves once
 * Upstash confirmed the subscription, rejects when it could not be opened (or `signal` aborted
 * it first). Once confirmed, a stream that ends or fails ends `sub` with `transport_lost`.
 */
export async function openStream(
  options: StreamOptions,
  name: string,
  sub: BufferedSubscription,
  signal: AbortSignal,
): Promise<void> {
  const confirmed = Promise.withResolvers<void>();
  const response = await fetch(`${options.url}/subscribe/${pathSegment(name)}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: "text/event-stream",
      "cache-control": "no-cache",
      "content-type": "application/json",
    },
    body: "[]",
    signal,
  });
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => "");
    throw new Error(`subscribe answered ${response.status}: ${text.slice(0, 200)}`);
  }
  void readStream(response.body, name, sub, confirmed, options.onError);
  await confirmed.promise;
}

/**
 * Reads one subscription stream: resolves `confirmed` on the `subscribe` frame, pushes each
 * `message` frame, and ends the subscription with `transport_lost` when the stream ends or
 * fails for any reason but our own abort.
 */
async function readStream(
  body: ReadableStream<Uint8Array>,
  name: string,
  sub: BufferedSubscription,
  confirmed: PromiseWithResolvers<void>,
  onError: (err: unknown) => void,
): Promise<void> {
  // The cast bridges lib.dom's and @types/node's stream typings, which disagree on BufferSource.
  const decoder = new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>;
  const reader = body.pipeThrough(decoder).getReader();
  const messagePrefix = `message,${name},`;
  const subscribePrefix = `subscribe,${name},`;
  let active = false;
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        let line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        // Blank lines, comments (keep-alives) and other fields carry nothing for us.
        if (!line.startsWith("data:")) continue;
        const data = line.startsWith("data: ") ? line.slice(6) : line.slice(5);
        if (data.startsWith(messagePrefix)) {
          if (active) sub.push(data.slice(messagePrefix.length));
        } else if (data.startsWith(subscribePrefix)) {
          active = true;
          confirmed.resolve();
        } else if (data.startsWith("unsubscribe,")) {
          throw new Error("Upstash ended the subscription");
        }
      }
      if (buffer.length > MAX_LINE) throw new Error("subscription stream line too long");
    }
    throw new Error("Upstash closed the subscription stream");
  } catch (err) {
    if (!active) {
      confirmed.reject(err);
    } else if (!sub.isEnded) {
      sub.end("transport_lost");
      onError(
        new PubSubError("transport_lost", `Upstash subscription lost: ${messageOf(err)}`, {
          channel: name,
          cause: err,
        }),
      );
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * The channel as one URL path segment. @upstash/redis puts it in the path unencoded; encoding
 * keeps `/`, `?`, `#` and `%` from changing the URL, and `:` (our prefix separator) stays
 * readable because it is legal in a path segment.
 */
function pathSegment(channel: string): string {
  return encodeURIComponent(channel).replaceAll("%3A", ":");
}
