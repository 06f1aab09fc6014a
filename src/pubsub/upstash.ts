/**
 * The `redis` transport over Upstash's REST API (an `https://` URL and a token), for Deno Deploy
 * where a long-lived TCP connection to Redis is not the way to go.
 *
 * Publishing goes through `@upstash/redis` (`publish`, or a pipeline of them), one request at a
 * time so publishes keep their order. Subscribing reads Upstash's streaming endpoint with `fetch`
 * (upstash_stream.ts). A channel's history is a Redis Stream (stream_history.ts).
 */
import { Redis } from "@upstash/redis";
import type { HistoryPage, PubSub, Retained, Subscription } from "./types.ts";
import { assertCapacity, BufferedSubscription } from "./subscription.ts";
import { messageOf, PubSubError, redactUrl, transportUnavailable } from "./errors.ts";
import { HISTORY_DEFAULTS, type HistorySettings } from "./history.ts";
import { entryId, historyKey, OpenHistories, seqOf } from "./stream_history.ts";
import { openStream } from "./upstash_stream.ts";

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
  /** The history `append` keeps: a Redis Stream per channel in the Upstash database. */
  history?: HistorySettings;
}

interface Settings {
  url: string;
  token: string;
  capacity: number;
  prefix: string;
  onError: (err: unknown) => void;
  publishTimeoutMs: number;
  connectTimeoutMs: number;
  history: HistorySettings;
}

type Pipeline = ReturnType<Redis["pipeline"]>;

/** A queued publish (or history write): the commands it adds to the next request. */
interface Pending {
  channel: string;
  commands: (pipeline: Pipeline) => void;
  done: () => void;
}

// Publishes waiting while a request is in flight leave together in one pipeline request; the
// bounds keep a request small and the memory of an outage finite.
const MAX_BATCH = 512;
const MAX_QUEUED = 65_536;

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
    history: options.history ?? HISTORY_DEFAULTS,
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
  /** When each open history's TTL was last refreshed. */
  readonly #histories = new OpenHistories();

  constructor(s: Settings) {
    this.#s = s;
    this.#redis = restClient(s, () => this.#request.signal);
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
    return this.#enqueue(name, (p) => p.publish(name, message));
  }

  append(channel: string, entries: Retained[], message: string): Promise<void> {
    const { retention, maxEvents } = this.#s.history;
    if (retention === 0 || this.#closed || /[\r\n]/.test(message)) {
      return this.publish(channel, message);
    }
    const name = `${this.#s.prefix}:${channel}`;
    const key = historyKey(name);
    const ttl = this.#histories.ttlDue(key, retention);
    // One pipeline, whose commands Upstash runs in order: the entries exist before the publish.
    return this.#enqueue(name, (p) => {
      for (const entry of entries) {
        p.xadd(key, entryId(entry.seq), { m: entry.message }, {
          trim: { type: "MAXLEN", comparison: "~", threshold: maxEvents },
        });
      }
      if (ttl > 0) p.pexpire(key, ttl);
      p.publish(name, message);
    });
  }

  seal(channel: string): Promise<void> {
    const name = `${this.#s.prefix}:${channel}`;
    const key = historyKey(name);
    this.#histories.sealed(key);
    if (this.#s.history.retention === 0 || this.#closed) return Promise.resolve();
    return this.#enqueue(name, (p) => p.pexpire(key, this.#s.history.retention));
  }

  async history(channel: string, after: number): Promise<HistoryPage | null> {
    if (this.#s.history.retention === 0) return null;
    const key = historyKey(`${this.#s.prefix}:${channel}`);
    let replies: unknown[];
    try {
      // A pipeline, not a transaction: an entry appended between the reads only makes `last`
      // newer than the range, which readers allow for.
      replies = await this.#query((redis) =>
        redis.pipeline()
          .exists(key)
          .xrange(key, entryId(after + 1), "+")
          .xrange(key, "-", "+", 1)
          .xrevrange(key, "+", "-", 1)
          .exec()
      );
    } catch (err) {
      throw transportUnavailable("the event history (Upstash)", err);
    }
    const [exists, range, oldest, newest] = replies as [number, RawEntry[], RawEntry[], RawEntry[]];
    if (!exists) return null;
    return {
      entries: range.map(([id, fields]) => ({ seq: seqOf(id), message: fieldOf(fields, "m") })),
      first: oldest[0] ? seqOf(oldest[0][0]) : null,
      last: newest[0] ? seqOf(newest[0][0]) : null,
    };
  }

  #enqueue(name: string, commands: (pipeline: Pipeline) => void): Promise<void> {
    if (this.#queue.length >= MAX_QUEUED) return this.#drop([name], "publish queue is full");
    const done = Promise.withResolvers<void>();
    this.#queue.push({ channel: name, commands, done: done.resolve });
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
    const timer = setTimeout(() => controller.abort(), this.#s.connectTimeoutMs);
    try {
      await openStream(this.#s, name, sub, controller.signal);
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
            const pipeline = this.#redis.pipeline();
            for (const p of batch) p.commands(pipeline);
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

  /**
   * Runs a read on a client of its own: the publishing client's one abort signal belongs to the
   * request in flight, and reads may run beside it (and beside each other).
   */
  async #query<T>(request: (redis: Redis) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const redis = restClient(this.#s, () => controller.signal);
    const timer = setTimeout(
      () => controller.abort(new Error(`no answer within ${this.#s.publishTimeoutMs} ms`)),
      this.#s.publishTimeoutMs,
    );
    try {
      return await request(redis);
    } finally {
      clearTimeout(timer);
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
}

/** An XRANGE entry as Upstash returns it raw: the id and the flat field/value list. */
type RawEntry = [string, string[]];

function fieldOf(fields: string[], name: string): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return "";
}

/** A REST client of the transport's database whose requests take the signal `signal` returns. */
function restClient(s: Settings, signal: () => AbortSignal): Redis {
  return new Redis({
    url: s.url,
    token: s.token,
    // Failing fast is the contract: a dropped live event is reported, never retried for seconds.
    retry: { retries: 0 },
    signal,
    automaticDeserialization: false,
    // Ordering comes from our own sequential batches; auto-pipelining would add another layer.
    enableAutoPipelining: false,
    enableTelemetry: false,
    readYourWrites: false,
  });
}
