/**
 * The `redis` transport for `redis://` and `rediss://` URLs, through node-redis: one publisher
 * connection (here) and one dedicated subscriber connection (redis_subscriber.ts) per PubSub,
 * with one Redis `SUBSCRIBE` per channel shared by all local subscribers of that channel. A
 * channel's history is a Redis Stream (stream_history.ts), appended to by one script.
 *
 * Neither connection reconnects on its own. A silent reconnect of the subscriber would resubscribe
 * behind streams that already missed the messages of the outage; ending them with
 * `transport_lost` tells their clients to reattach instead. The next `subscribe()` opens a new
 * connection; the next `publish()` after a short backoff reconnects the publisher.
 */
import { ErrorReply } from "redis";
import type { HistoryPage, PubSub, Subscription } from "./types.ts";
import { assertCapacity, BufferedSubscription } from "./subscription.ts";
import { messageOf, PubSubError, redactUrl, transportUnavailable } from "./errors.ts";
import { HISTORY_DEFAULTS, type HistorySettings, type Retained } from "./history.ts";
import {
  type Client,
  newClient,
  type RedisSettings,
  TimeoutError,
  withTimeout,
} from "./redis_connection.ts";
import { SubscriberConnection } from "./redis_subscriber.ts";
import { APPEND_SCRIPT, APPEND_SHA, oneByOne, type Pending, scriptArgs } from "./redis_append.ts";
import { entryId, historyKey, OpenHistories, seqOf } from "./stream_history.ts";

/** Settings of the Redis transport. */
export interface RedisPubSubOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /** Undelivered messages one subscriber may hold before it is closed with `overflow`. */
  capacity: number;
  /** Prefix of every channel name, so several deployments can share one Redis. */
  prefix: string;
  /** Receives what the transport absorbs instead of throwing (dropped publishes, lost links). */
  onError?: (err: unknown) => void;
  /** Milliseconds a publish may wait for Redis before it is dropped; default 2000. */
  publishTimeoutMs?: number;
  /** Milliseconds between liveness pings on the subscriber connection; default 10000. */
  heartbeatMs?: number;
  /** Milliseconds to establish a connection; default 5000. */
  connectTimeoutMs?: number;
  /** The history `append` keeps: a Redis Stream per channel, so every replica can replay. */
  history?: HistorySettings;
}

/** How Redis refuses a script it will not run at all (EVAL renamed away, or denied by an ACL). */
const SCRIPTING_REFUSED = /unknown command|NOPERM/i;

// Backoff between publisher reconnect attempts while Redis is down, so a run publishing tokens
// does not open a connection per token.
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Creates the Redis transport and connects its publisher, so a wrong URL or an unreachable Redis
 * fails at startup with a clear message rather than at the first run.
 */
export async function createRedisPubSub(options: RedisPubSubOptions): Promise<PubSub> {
  assertCapacity(options.capacity);
  const pubsub = new RedisPubSub({
    url: options.url,
    capacity: options.capacity,
    prefix: options.prefix,
    onError: options.onError ?? (() => {}),
    publishTimeoutMs: options.publishTimeoutMs ?? 2_000,
    heartbeatMs: options.heartbeatMs ?? 10_000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    history: options.history ?? HISTORY_DEFAULTS,
  });
  await pubsub.start();
  return pubsub;
}

class RedisPubSub implements PubSub {
  readonly kind = "redis";
  readonly #s: RedisSettings;
  #closed = false;
  #publisher: Client | undefined;
  #publisherConnecting: Promise<Client | undefined> | undefined;
  #retryAt = 0;
  #retryDelay = 0;
  #subscriber: SubscriberConnection | undefined;
  #subscriberOpening: Promise<SubscriberConnection> | undefined;
  /** Whether appends go as one script (`APPEND_SCRIPT`); false once Redis refused to run it. */
  #scripting = true;
  /** The publisher connection the script was loaded on, which names it by its SHA. */
  #byShaOn: Client | undefined;
  /** The appends of this turn, sent together at its end (`#flushBatch`). */
  #batch: Pending[] | undefined;
  /** When each open history's TTL was last refreshed. */
  readonly #histories = new OpenHistories();

  constructor(settings: RedisSettings) {
    this.#s = settings;
  }

  async start(): Promise<void> {
    try {
      this.#publisher = await this.#openPublisher();
    } catch (err) {
      throw new Error(
        `pubsub: cannot connect to Redis at ${redactUrl(this.#s.url)}: ${messageOf(err)}`,
        { cause: err },
      );
    }
  }

  publish(channel: string, message: string): Promise<void> {
    const name = `${this.#s.prefix}:${channel}`;
    return this.#send(name, (client) => [client.publish(name, message)]);
  }

  append(channel: string, entries: Retained[], message: string): Promise<void> {
    const name = `${this.#s.prefix}:${channel}`;
    const { retention } = this.#s.history;
    if (retention === 0) return this.publish(channel, message);
    const key = historyKey(name);
    const ttl = this.#histories.ttlDue(key, retention);
    const { promise, resolve } = Promise.withResolvers<void>();
    if (!this.#batch) {
      this.#batch = [];
      queueMicrotask(() => this.#flushBatch());
    }
    this.#batch.push({ name, key, entries, message, ttl, done: resolve });
    return promise;
  }

  /**
   * Sends the turn's appends (see `APPEND_SCRIPT`). Every other command on the publisher flushes
   * them first, so Redis still runs everything in the order it was asked for.
   */
  #flushBatch(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    if (!batch || batch.length === 0) return;
    void this.#sendBatch(batch).finally(() => {
      for (const item of batch) item.done();
    });
  }

  /** Each append's answer: `OK`, or why it was dropped. */
  #script(client: Client, batch: Pending[]): Promise<string[]> {
    const args = scriptArgs(batch, this.#s.history.maxEvents);
    // By its SHA (loaded as the connection opened); after a `SCRIPT FLUSH` Redis answers
    // NOSCRIPT, and this connection sends the script itself from then on.
    const sent = this.#byShaOn === client
      ? client.sendCommand(["EVALSHA", APPEND_SHA, ...args]).catch((err: unknown) => {
        if (!(err instanceof ErrorReply && /NOSCRIPT/.test(err.message))) throw err;
        if (this.#byShaOn === client) this.#byShaOn = undefined;
        return client.sendCommand(["EVAL", APPEND_SCRIPT, ...args]);
      })
      : client.sendCommand(["EVAL", APPEND_SCRIPT, ...args]);
    return sent.then(
      (reply) => (Array.isArray(reply) ? reply : [reply]).map(String),
      async (err: unknown) => {
        // Redis refused the script, or it stopped on an error: the commands one by one, so
        // what they would do without a script still happens (the publish above all). A Redis
        // that runs no scripts at all gets the commands from now on.
        if (!(err instanceof ErrorReply)) throw err;
        if (SCRIPTING_REFUSED.test(err.message)) this.#scripting = false;
        return await oneByOne(client, batch, this.#s.history.maxEvents);
      },
    );
  }

  /** Sends a turn's appends (see `#sendVia`). */
  #sendBatch(batch: Pending[]): Promise<void> {
    const maxEvents = this.#s.history.maxEvents;
    return this.#sendVia(
      batch.map((item) => item.name),
      (client) =>
        this.#scripting ? this.#script(client, batch) : oneByOne(client, batch, maxEvents),
    );
  }

  seal(channel: string): Promise<void> {
    const name = `${this.#s.prefix}:${channel}`;
    const key = historyKey(name);
    this.#histories.sealed(key);
    if (this.#s.history.retention === 0) return Promise.resolve();
    return this.#send(name, (client) => [client.pExpire(key, this.#s.history.retention)]);
  }

  async history(channel: string, after: number): Promise<HistoryPage | null> {
    if (this.#s.history.retention === 0) return null;
    this.#flushBatch();
    const key = historyKey(`${this.#s.prefix}:${channel}`);
    const client = this.#closed ? undefined : this.#publisher ?? await this.#reconnectPublisher();
    if (!client) {
      throw transportUnavailable("the event history (Redis)", new Error("Redis is unavailable"));
    }
    try {
      // One transaction, so the range, the oldest and the newest entry agree.
      const [exists, range, oldest, newest] = await withTimeout(
        client.multi()
          .exists(key)
          .xRange(key, entryId(after + 1), "+")
          .xRange(key, "-", "+", { COUNT: 1 })
          .xRevRange(key, "+", "-", { COUNT: 1 })
          .exec(),
        this.#s.publishTimeoutMs,
      ) as unknown as [number, StreamEntry[], StreamEntry[], StreamEntry[]];
      if (!exists) return null;
      return {
        entries: range.map(retained),
        first: oldest[0] ? seqOf(oldest[0].id) : null,
        last: newest[0] ? seqOf(newest[0].id) : null,
      };
    } catch (err) {
      throw transportUnavailable("the event history (Redis)", err);
    }
  }

  /** Sends the commands `build` makes, after this turn's appends (see `#sendVia`). */
  #send(name: string, build: (client: Client) => Promise<unknown>[]): Promise<void> {
    this.#flushBatch();
    return this.#sendVia([name], (client) => Promise.all(build(client)).then(() => ["OK"]));
  }

  /**
   * Sends what `send` makes on the publisher connection and waits for its answers (one per
   * channel of `names`: `OK`, or why it failed) at most `publishTimeoutMs`; a failure drops the
   * message (reported, never thrown).
   */
  async #sendVia(names: string[], send: (client: Client) => Promise<string[]>): Promise<void> {
    const dropAll = (why: string, cause?: unknown) => {
      for (const name of names) this.#drop(name, why, cause);
    };
    if (this.#closed) return dropAll("publish after close");
    const client = this.#publisher ?? await this.#reconnectPublisher();
    if (!client) return dropAll("Redis is unavailable");
    const sent = send(client);
    try {
      const answers = await withTimeout(sent, this.#s.publishTimeoutMs);
      answers.forEach((answer, i) => {
        if (answer !== "OK") this.#drop(names[i], answer);
      });
    } catch (err) {
      if (err instanceof TimeoutError) {
        // A PUBLISH that got no reply in time means a stalled link; waiting for TCP to notice
        // would make every following publish wait too, so drop the connection now.
        sent.catch(() => {});
        this.#publisherLost(client, err);
      }
      dropAll(messageOf(err), err);
    }
  }

  async subscribe(channel: string): Promise<Subscription> {
    if (this.#closed) throw new Error("pubsub: subscribe after close");
    const name = `${this.#s.prefix}:${channel}`;
    const conn = await this.#subscriberConnection();
    const sub = new BufferedSubscription(this.#s.capacity, () => conn.leave(sub));
    try {
      await conn.join(name, sub);
    } catch (err) {
      sub.end("transport_lost");
      if (this.#closed) throw new Error("pubsub: closed while subscribing");
      throw transportUnavailable("the live event transport (Redis)", err);
    }
    return sub;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // This turn's appends go out before the publisher closes.
    this.#flushBatch();
    this.#closed = true;
    this.#subscriber?.shutdown();
    this.#subscriber = undefined;
    await this.#subscriberOpening?.catch(() => {});
    await this.#publisherConnecting;
    const publisher = this.#publisher;
    this.#publisher = undefined;
    if (publisher) {
      // Lets publishes already sent get their replies, but never waits long for a stalled Redis.
      await withTimeout(publisher.close(), this.#s.publishTimeoutMs).catch(() => {});
      publisher.destroy();
    }
  }

  #drop(channel: string, why: string, cause?: unknown): void {
    this.#s.onError(
      new PubSubError("publish_dropped", `message not published: ${why}`, { channel, cause }),
    );
  }

  async #openPublisher(): Promise<Client> {
    const client = newClient(this.#s);
    client.on("error", (err: unknown) => {
      if (!client.isOpen) this.#publisherLost(client, err);
    });
    await client.connect();
    if (this.#scripting) {
      // Refused (scripts renamed away or denied): appends find out on their own and fall back.
      await withTimeout(
        client.sendCommand(["SCRIPT", "LOAD", APPEND_SCRIPT]),
        this.#s.connectTimeoutMs,
      ).then(
        () => this.#byShaOn = client,
        () => {},
      );
    }
    return client;
  }

  #publisherLost(client: Client, err: unknown): void {
    if (this.#publisher !== client) return;
    this.#publisher = undefined;
    client.destroy();
    this.#s.onError(
      new PubSubError("transport_lost", `Redis publisher connection lost: ${messageOf(err)}`, {
        cause: err,
      }),
    );
  }

  /**
   * Starts a reconnect when the backoff allows one, and waits for an attempt in flight at most
   * as long as a publish may take; `undefined` means "drop this message".
   */
  async #reconnectPublisher(): Promise<Client | undefined> {
    if (!this.#publisherConnecting && Date.now() >= this.#retryAt) {
      this.#publisherConnecting = this.#openPublisher().then(
        (client) => {
          this.#publisherConnecting = undefined;
          if (this.#closed) {
            client.destroy();
            return undefined;
          }
          this.#retryDelay = 0;
          this.#publisher = client;
          return client;
        },
        (err) => {
          this.#publisherConnecting = undefined;
          this.#retryDelay = Math.min(Math.max(this.#retryDelay * 2, RETRY_MIN_MS), RETRY_MAX_MS);
          this.#retryAt = Date.now() + this.#retryDelay;
          this.#s.onError(
            new PubSubError("transport_lost", `Redis reconnect failed: ${messageOf(err)}`, {
              cause: err,
            }),
          );
          return undefined;
        },
      );
    }
    if (!this.#publisherConnecting) return undefined;
    return await withTimeout(this.#publisherConnecting, this.#s.publishTimeoutMs).catch(() =>
      undefined
    );
  }

  async #subscriberConnection(): Promise<SubscriberConnection> {
    if (this.#subscriber && !this.#subscriber.lost) return this.#subscriber;
    this.#subscriberOpening ??= SubscriberConnection.open(this.#s, (conn, err) => {
      if (this.#subscriber === conn) this.#subscriber = undefined;
      this.#s.onError(
        new PubSubError("transport_lost", `Redis subscriber connection lost: ${messageOf(err)}`, {
          cause: err,
        }),
      );
    }).then((conn) => {
      this.#subscriberOpening = undefined;
      if (this.#closed) {
        conn.shutdown();
        throw new Error("pubsub: closed while subscribing");
      }
      this.#subscriber = conn;
      // Redis is reachable again: let the next publish reconnect now rather than after the
      // backoff an outage built up, so reattached clients miss as little as possible.
      this.#retryAt = 0;
      return conn;
    }, (err) => {
      this.#subscriberOpening = undefined;
      throw err;
    });
    try {
      return await this.#subscriberOpening;
    } catch (err) {
      if (this.#closed) throw err;
      throw transportUnavailable("the live event transport (Redis)", err);
    }
  }
}

/** An entry of XRANGE as node-redis returns it. */
interface StreamEntry {
  id: string;
  message: Record<string, string>;
}

function retained(entry: StreamEntry): Retained {
  return { seq: seqOf(entry.id), message: entry.message.m };
}
