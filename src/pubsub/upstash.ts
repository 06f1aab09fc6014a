/**
 * The `redis` transport over Upstash's REST API (an `https://` URL and a token), for Deno Deploy
 * where a long-lived TCP connection to Redis is not the way to go.
 *
 * Publishing goes through `@upstash/redis` (`publish`, or a pipeline of them). Subscribing uses
 * Upstash's streaming endpoint `POST <url>/subscribe/<channel>` (server-sent events) read with
 * `fetch` directly, on the same wire format as `@upstash/redis`'s `redis.subscribe()`. That
 * client's subscriber (1.39) cannot serve here: it never reports the end of a stream (its reader
 * loop just stops; errors go to `console.error`), gives no signal when the subscription is active
 * (only a `subscribe` event we would have to wait for anyway), and retries a failed connect five
 * times with backoff. A stream that ended silently would leave a reattached client hanging
 * forever instead of receiving `transport_lost`.
 */
import { Redis } from "@upstash/redis";
import type { PubSub, Subscription } from "./types.ts";
import { assertCapacity, BufferedSubscription } from "./subscription.ts";
import { messageOf, PubSubError, redactUrl, transportUnavailable } from "./errors.ts";

/** Settings of the Upstash REST transport. */
export interface UpstashPubSubOptions {
  /** The REST URL: `https://…upstash.io` (plain `http://` only for a local gateway). */
  url: string;
  /** The REST token (sent as `Authorization: Bearer <token>`). */
  token: string;
  /** Undelivered messages one subscriber may hold before it is closed with `overflow`. */
  capacity: number;
  /** Prefix of every channel name, so several deployments can share one database. */
  prefix: string;
  /** Receives what the transport absorbs instead of throwing (dropped publishes, lost streams). */
  onError?: (err: unknown) => void;
  /** Milliseconds one publish request may take before its messages are dropped; default 2000. */
  publishTimeoutMs?: number;
  /** Milliseconds until a subscription stream must be confirmed; default 5000. */
  connectTimeoutMs?: number;
}

interface Settings {
  url: string;
  token: string;
  capacity: number;
  prefix: string;
  onError: (err: unknown) => void;
  publishTimeoutMs: number;
  connectTimeoutMs: number;
}

interface Pending {
  channel: string;
  message: string;
  done: () => void;
}

// Publishes waiting while a request is in flight leave together in one pipeline request; the
// bounds keep a request small and the memory of an outage finite.
const MAX_BATCH = 512;
const MAX_QUEUED = 65_536;
// A subscription stream line longer than this is not an Upstash frame; stop reading it.
const MAX_LINE = 16 * 1024 * 1024;

/**
 * Creates the Upstash transport and checks the URL and token with one `PING`, so a wrong token
 * fails at startup rather than at the first reattach.
 */
export async function createUpstashPubSub(options: UpstashPubSubOptions): Promise<PubSub> {
  assertCapacity(options.capacity);
  const pubsub = new UpstashPubSub({
    url: options.url.replace(/\/+$/, ""),
    token: options.token,
    capacity: options.capacity,
    prefix: options.prefix,
    onError: options.onError ?? (() => {}),
    publishTimeoutMs: options.publishTimeoutMs ?? 2_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
  });
  await pubsub.start();
  return pubsub;
}

class UpstashPubSub implements PubSub {
  readonly kind = "redis";
  readonly #s: Settings;
  readonly #redis: Redis;
  readonly #subs = new Set<BufferedSubscription>();
  #queue: Pending[] = [];
  #draining = false;
  #drained: PromiseWithResolvers<void> | undefined;
  // The signal of the one request in flight. Requests are strictly sequential (see #drain), so a
  // signal getter is unambiguous; @upstash/redis takes the getter form and then throws on abort
  // (with a plain signal it would report an aborted request as a successful "Aborted" reply).
  #request = new AbortController();
  #closed = false;
  // Set when close() stops waiting for the queue: what is still queued is dropped, not sent.
  #cutOff = false;

  constructor(s: Settings) {
    this.#s = s;
    this.#redis = new Redis({
      url: s.url,
      token: s.token,
      // Failing fast is the contract: a dropped live event is reported, never retried for seconds.
      retry: { retries: 0 },
      signal: () => this.#request.signal,
      automaticDeserialization: false,
      // Ordering comes from our own sequential batches; auto-pipelining would add another layer.
      enableAutoPipelining: false,
      enableTelemetry: false,
      readYourWrites: false,
    });
  }

  async start(): Promise<void> {
    try {
      await this.#timed(() => this.#redis.ping());
    } catch (err) {
      throw new Error(
        `pubsub: cannot reach Upstash at ${redactUrl(this.#s.url)}: ${messageOf(err)}`,
        { cause: err },
      );
    }
  }

  publish(channel: string, message: string): Promise<void> {
    const name = `${this.#s.prefix}:${channel}`;
    if (this.#closed) return this.#drop([name], "publish after close");
    // The stream frames one message per `data:` line, as @upstash/redis parses it; a line break
    // would split the message on the way out. Run events are single-line JSON.
    if (/[\r\n]/.test(message)) {
      return this.#drop([name], "the message contains a line break, which Upstash streams split");
    }
    if (this.#queue.length >= MAX_QUEUED) return this.#drop([name], "publish queue is full");
    const done = Promise.withResolvers<void>();
    this.#queue.push({ channel: name, message, done: done.resolve });
    if (!this.#draining) void this.#drain();
    return done.promise;
  }

  async subscribe(channel: string): Promise<Subscription> {
    if (this.#closed) throw new Error("pubsub: subscribe after close");
    const name = `${this.#s.prefix}:${channel}`;
    const controller = new AbortController();
    const sub = new BufferedSubscription(this.#s.capacity, () => {
      this.#subs.delete(sub);
      controller.abort();
    });
    this.#subs.add(sub);
    const confirmed = Promise.withResolvers<void>();
    const timer = setTimeout(() => controller.abort(), this.#s.connectTimeoutMs);
    try {
      const response = await fetch(`${this.#s.url}/subscribe/${pathSegment(name)}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.#s.token}`,
          accept: "text/event-stream",
          "cache-control": "no-cache",
          "content-type": "application/json",
        },
        body: "[]",
        signal: controller.signal,
      });
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => "");
        throw new Error(`subscribe answered ${response.status}: ${text.slice(0, 200)}`);
      }
      void this.#read(response.body, name, sub, confirmed);
      await confirmed.promise;
    } catch (err) {
      sub.end("transport_lost");
      if (this.#closed) throw new Error("pubsub: closed while subscribing");
      throw transportUnavailable("the live event transport (Upstash)", err);
    } finally {
      clearTimeout(timer);
    }
    return sub;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const sub of [...this.#subs]) sub.end("closed");
    // Publishes already accepted get one request's worth of time, then are cut off.
    if (this.#draining) {
      const drained = this.#drained ??= Promise.withResolvers<void>();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        drained.promise,
        new Promise<void>((resolve) => timer = setTimeout(resolve, this.#s.publishTimeoutMs)),
      ]);
      clearTimeout(timer);
      this.#cutOff = true;
      this.#request.abort();
      await drained.promise;
    }
  }

  #drop(channels: string[], why: string, cause?: unknown): Promise<void> {
    for (const channel of channels) {
      this.#s.onError(
        new PubSubError("publish_dropped", `message not published: ${why}`, { channel, cause }),
      );
    }
    return Promise.resolve();
  }

  /**
   * Sends the queue one request at a time, in order: separate REST requests may overtake each
   * other, so a publish starts only after the previous one has answered.
   */
  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        if (this.#cutOff) {
          void this.#drop(batch.map((p) => p.channel), "closed before it was sent");
          for (const p of batch) p.done();
          continue;
        }
        try {
          await this.#timed<unknown>(() => {
            if (batch.length === 1) return this.#redis.publish(batch[0].channel, batch[0].message);
            const pipeline = this.#redis.pipeline();
            for (const p of batch) pipeline.publish(p.channel, p.message);
            return pipeline.exec();
          });
        } catch (err) {
          void this.#drop(batch.map((p) => p.channel), messageOf(err), err);
        } finally {
          for (const p of batch) p.done();
        }
      }
    } finally {
      this.#draining = false;
      this.#drained?.resolve();
      this.#drained = undefined;
    }
  }

  /** Runs one REST request under a fresh signal that aborts it after `publishTimeoutMs`. */
  async #timed<T>(request: () => Promise<T>): Promise<T> {
    this.#request = new AbortController();
    const controller = this.#request;
    const timer = setTimeout(
      () => controller.abort(new Error(`no answer within ${this.#s.publishTimeoutMs} ms`)),
      this.#s.publishTimeoutMs,
    );
    try {
      return await request();
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads one subscription stream: resolves `confirmed` on the `subscribe` frame, pushes each
   * `message` frame, and ends the subscription with `transport_lost` when the stream ends or
   * fails for any reason but our own abort.
   */
  async #read(
    body: ReadableStream<Uint8Array>,
    name: string,
    sub: BufferedSubscription,
    confirmed: PromiseWithResolvers<void>,
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
        this.#s.onError(
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
}

/**
 * The channel as one URL path segment. @upstash/redis puts it in the path unencoded; encoding
 * keeps `/`, `?`, `#` and `%` from changing the URL, and `:` (our prefix separator) stays
 * readable because it is legal in a path segment.
 */
function pathSegment(channel: string): string {
  return encodeURIComponent(channel).replaceAll("%3A", ":");
}
