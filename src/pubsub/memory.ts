/**
 * The `memory` transport: this isolate's subscribers are reached directly, other isolates through
 * one `BroadcastChannel` per prefix (the bus). In one Deno process that reaches every PubSub of the
 * same prefix, in this isolate and in Workers; on Deno Deploy, BroadcastChannel also spans the
 * isolates of a deployment.
 *
 * One bus per prefix and isolate, shared by its PubSubs, carries `[channel, message]`. Deno
 * (verified on 2.9.6, and in its `01_broadcast_channel.js`) hands a post to every other open object
 * of that name in the same isolate, never to the sender, and to every other isolate; a post scans
 * every open BroadcastChannel of the isolate, so one object per run channel made each token's post
 * cost grow with the runs in flight (12 µs with one open, 33 µs with 500, on a loaded machine). As
 * there is one bus object per isolate, a message comes back to no one twice: the publisher hands
 * it to this isolate's subscribers itself, the bus to the other isolates'. A subscriber added after
 * a publish does not get it: the "nothing before subscribe" rule, with no bookkeeping of ours.
 */
import type { HistoryPage, PubSub, Retained, Subscription } from "./types.ts";
import { assertCapacity, BufferedSubscription } from "./subscription.ts";
import { PubSubError } from "./errors.ts";
import { HISTORY_DEFAULTS, type HistorySettings, MemoryHistory } from "./history.ts";

/** Settings of the memory transport. */
export interface MemoryPubSubOptions {
  /** Undelivered messages one subscriber may hold before it is closed with `overflow`. */
  capacity: number;
  /** Prefix of every channel name; PubSubs with different prefixes never see each other. */
  prefix: string;
  /** Receives what the transport absorbs instead of throwing (publishes after `close()`). */
  onError?: (err: unknown) => void;
  /**
   * The history `append` keeps, in this process only: another process (or a Deno Deploy isolate)
   * hears the live messages of a BroadcastChannel but cannot replay them.
   */
  history?: HistorySettings;
  /**
   * Whether a subscriber may be in another isolate (a Worker, `deno serve --parallel`, Deno
   * Deploy): only then does a publish also post to the bus, whose post costs a paced token ~3 µs
   * (structured clone and send) whether anyone listens or not. True by default; `main.ts serve`
   * runs one isolate and says false.
   */
  otherIsolates?: boolean;
}

/** This isolate's subscribers, by `<prefix>:<channel>`, of every memory PubSub. */
const subscribers = new Map<string, Set<BufferedSubscription>>();

/** A prefix's bus in this isolate and the open PubSubs sharing it. */
interface Bus {
  channel: BroadcastChannel;
  users: number;
}
const buses = new Map<string, Bus>();

/** Hands `message` to this isolate's subscribers of `name`. */
function deliverHere(name: string, message: string): void {
  const subs = subscribers.get(name);
  if (subs) { for (const sub of subs) sub.push(message); }
}

/** The prefix's bus, opened by its first PubSub in this isolate. */
function openBus(prefix: string): Bus {
  let bus = buses.get(prefix);
  if (!bus) {
    const channel = new BroadcastChannel(`${prefix}:\u0000bus`);
    channel.onmessage = (event: MessageEvent) => {
      const data = event.data;
      if (Array.isArray(data) && typeof data[0] === "string" && typeof data[1] === "string") {
        deliverHere(`${prefix}:${data[0]}`, data[1]);
      }
    };
    buses.set(prefix, bus = { channel, users: 0 });
  }
  bus.users++;
  return bus;
}

/** Creates the BroadcastChannel transport. */
export function createMemoryPubSub(options: MemoryPubSubOptions): PubSub {
  return new MemoryPubSub(options);
}

class MemoryPubSub implements PubSub {
  readonly kind = "memory";
  readonly #capacity: number;
  readonly #prefix: string;
  readonly #onError: (err: unknown) => void;
  readonly #subscriptions = new Set<BufferedSubscription>();
  readonly #history: MemoryHistory;
  readonly #bus: Bus;
  readonly #otherIsolates: boolean;
  #closed = false;

  constructor(options: MemoryPubSubOptions) {
    assertCapacity(options.capacity);
    this.#capacity = options.capacity;
    this.#prefix = options.prefix;
    this.#onError = options.onError ?? (() => {});
    this.#history = new MemoryHistory(options.history ?? HISTORY_DEFAULTS);
    this.#bus = openBus(this.#prefix);
    this.#otherIsolates = options.otherIsolates ?? true;
  }

  append(channel: string, entries: Retained[], message: string): Promise<void> {
    if (!this.#closed) {
      for (const entry of entries) this.#history.append(channel, entry.seq, entry.message);
    }
    return this.publish(channel, message);
  }

  seal(channel: string): Promise<void> {
    this.#history.seal(channel);
    return Promise.resolve();
  }

  history(channel: string, after: number): Promise<HistoryPage | null> {
    return Promise.resolve(this.#history.read(channel, after));
  }

  publish(channel: string, message: string): Promise<void> {
    if (this.#closed) {
      this.#onError(
        new PubSubError("publish_dropped", "publish after close", {
          channel: `${this.#prefix}:${channel}`,
        }),
      );
      return Promise.resolve();
    }
    deliverHere(`${this.#prefix}:${channel}`, message);
    if (!this.#otherIsolates) return Promise.resolve();
    try {
      this.#bus.channel.postMessage([channel, message]);
    } catch (err) {
      this.#onError(
        new PubSubError("publish_dropped", "BroadcastChannel refused the message", {
          channel: `${this.#prefix}:${channel}`,
          cause: err,
        }),
      );
    }
    return Promise.resolve();
  }

  subscribe(channel: string): Promise<Subscription> {
    if (this.#closed) return Promise.reject(new Error("pubsub: subscribe after close"));
    const name = `${this.#prefix}:${channel}`;
    let subs = subscribers.get(name);
    if (!subs) subscribers.set(name, subs = new Set());
    const sub = new BufferedSubscription(this.#capacity, () => {
      subs.delete(sub);
      if (subs.size === 0 && subscribers.get(name) === subs) subscribers.delete(name);
      this.#subscriptions.delete(sub);
    });
    subs.add(sub);
    this.#subscriptions.add(sub);
    return Promise.resolve(sub);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const sub of [...this.#subscriptions]) sub.end("closed");
    if (--this.#bus.users === 0) {
      buses.delete(this.#prefix);
      this.#bus.channel.close();
    }
    return Promise.resolve();
  }
}
