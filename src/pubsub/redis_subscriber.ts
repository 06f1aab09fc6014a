/**
 * The Redis transport's dedicated subscriber connection: one Redis `SUBSCRIBE` per channel shared
 * by all local subscribers of that channel, a liveness ping, and the rule that losing the
 * connection ends every subscription on it (with `transport_lost`: a silent reconnect would
 * resubscribe behind streams that already missed the messages of the outage).
 */
import { messageOf, PubSubError } from "./errors.ts";
import {
  type Client,
  newClient,
  type RedisSettings,
  TimeoutError,
  withTimeout,
} from "./redis_connection.ts";
import type { BufferedSubscription } from "./subscription.ts";

/** One channel's shared Redis subscription and the local subscribers it feeds. */
interface ChannelState {
  readonly name: string;
  readonly subs: Set<BufferedSubscription>;
  readonly listener: (message: string) => void;
  ready: Promise<void>;
}

/**
 * The dedicated subscriber connection: reference-counted channels, a liveness ping, and the rule
 * that losing the connection ends every subscription on it.
 */
export class SubscriberConnection {
  readonly #client: Client;
  readonly #s: RedisSettings;
  readonly #onLost: (conn: SubscriberConnection, err: unknown) => void;
  readonly #channels = new Map<string, ChannelState>();
  readonly #member = new Map<BufferedSubscription, ChannelState>();
  #lost = false;
  #shutDown = false;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #pinging = false;

  /**
   * Connects a subscriber connection; `onLost` hears of it once when the connection is lost
   * (not when it is shut down).
   */
  static async open(
    s: RedisSettings,
    onLost: (conn: SubscriberConnection, err: unknown) => void,
  ): Promise<SubscriberConnection> {
    const client = newClient(s);
    const conn = new SubscriberConnection(client, s, onLost);
    let connected = false;
    client.on("error", (err: unknown) => {
      // A failed connect is reported by `connect()` rejecting, not as a lost connection.
      if (connected && !client.isOpen) conn.#lose(err);
    });
    try {
      await client.connect();
    } catch (err) {
      conn.#lost = true;
      client.destroy();
      throw err;
    }
    connected = true;
    conn.#startHeartbeat();
    return conn;
  }

  private constructor(
    client: Client,
    s: RedisSettings,
    onLost: (conn: SubscriberConnection, err: unknown) => void,
  ) {
    this.#client = client;
    this.#s = s;
    this.#onLost = onLost;
  }

  /** Whether the connection is gone (lost or shut down); a new one is needed. */
  get lost(): boolean {
    return this.#lost || this.#shutDown;
  }

  /**
   * Adds `sub` to the channel, issuing `SUBSCRIBE` for the first local subscriber. A later one
   * joins the shared subscription only after a PING round trip on this connection: Redis pushes
   * a message to the connection before it answers any later command, so every message published
   * before this `subscribe()` was called arrives before the PONG, and none of them reaches `sub`.
   */
  async join(name: string, sub: BufferedSubscription): Promise<void> {
    for (;;) {
      if (this.lost) throw new Error("Redis subscriber connection is gone");
      const existing = this.#channels.get(name);
      if (!existing) {
        const state: ChannelState = {
          name,
          subs: new Set([sub]),
          listener: (message) => {
            for (const s of state.subs) s.push(message);
          },
          ready: Promise.resolve(),
        };
        this.#channels.set(name, state);
        this.#member.set(sub, state);
        state.ready = this.#stalledIsLost(this.#client.subscribe(name, state.listener));
        try {
          await state.ready;
        } catch (err) {
          if (this.#channels.get(name) === state) this.#channels.delete(name);
          throw err;
        }
        if (sub.isEnded) throw new Error("subscription ended while subscribing");
        return;
      }
      await existing.ready;
      await this.#stalledIsLost(this.#client.ping());
      if (this.lost) throw new Error("Redis subscriber connection is gone");
      // The channel was unsubscribed while we waited (its last subscriber left): start over.
      if (this.#channels.get(name) !== existing) continue;
      existing.subs.add(sub);
      this.#member.set(sub, existing);
      return;
    }
  }

  /**
   * Waits for a reply on this connection, at most `connectTimeoutMs`: no reply by then means a
   * stalled link, which ends the connection now instead of at the next heartbeat.
   */
  async #stalledIsLost<T>(reply: Promise<T>): Promise<T> {
    try {
      return await withTimeout(reply, this.#s.connectTimeoutMs);
    } catch (err) {
      if (err instanceof TimeoutError) this.#lose(err);
      throw err;
    }
  }

  /** Removes `sub`; the last local subscriber of a channel unsubscribes it in Redis. */
  leave(sub: BufferedSubscription): void {
    const state = this.#member.get(sub);
    if (!state) return;
    this.#member.delete(sub);
    state.subs.delete(sub);
    if (state.subs.size > 0 || this.lost || this.#channels.get(state.name) !== state) return;
    this.#channels.delete(state.name);
    this.#client.unsubscribe(state.name, state.listener).catch((err: unknown) => {
      if (this.lost) return;
      this.#s.onError(
        new PubSubError("cleanup_failed", `UNSUBSCRIBE failed: ${messageOf(err)}`, {
          channel: state.name,
          cause: err,
        }),
      );
    });
  }

  /** Ends every subscription with `closed` and drops the connection (PubSub `close()`). */
  shutdown(): void {
    if (this.lost) return;
    this.#shutDown = true;
    this.#teardown("closed");
  }

  #lose(err: unknown): void {
    if (this.lost) return;
    this.#lost = true;
    this.#teardown("transport_lost");
    this.#onLost(this, err);
  }

  #teardown(reason: "closed" | "transport_lost"): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    const subs = [...this.#member.keys()];
    this.#channels.clear();
    this.#member.clear();
    for (const sub of subs) sub.end(reason);
    this.#client.destroy();
  }

  /**
   * A closed socket is noticed at once, but a stalled Redis or a dropped network path is not;
   * the periodic PING turns either into `transport_lost` within about one interval.
   */
  #startHeartbeat(): void {
    const heartbeat = setInterval(() => {
      if (this.#pinging || this.lost) return;
      this.#pinging = true;
      withTimeout(this.#client.ping(), this.#s.heartbeatMs)
        .catch((err) => this.#lose(err))
        .finally(() => this.#pinging = false);
    }, this.#s.heartbeatMs);
    // The heartbeat alone must not keep a process alive.
    Deno.unrefTimer(heartbeat);
    this.#heartbeat = heartbeat;
  }
}
