/**
 * The `memory` transport: `BroadcastChannel`. In one Deno process it reaches every PubSub of the
 * same prefix, in this isolate and in Workers; on Deno Deploy, BroadcastChannel also spans the
 * isolates of a deployment.
 *
 * Verified on Deno 2.9.6 (and in Deno's `01_broadcast_channel.js`): a message posted on one
 * `BroadcastChannel` object is delivered to every other open object of that name in the same
 * isolate, never to the sender, and only to objects that existed when it was posted. So no
 * separate in-process fan-out is needed, and each subscriber gets its own object: an object
 * created by `subscribe()` cannot receive a message published before it, which is exactly the
 * "nothing before subscribe" rule, with no bookkeeping of ours.
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
}

// Publisher objects kept open, most recently used last. Reusing one per channel avoids opening a
// BroadcastChannel per token (cheap in the CLI, a subscription to the cross-isolate backend on
// Deploy). A run's publisher closes when its channel is sealed (the run ended), so the open ones
// are about the running runs; the bound is above the concurrency a replica holds (an evicted
// publisher is reopened on its next message: 8.5 µs of CPU a post instead of 3–4.5), and every
// open one costs each post of the isolate a little (Deno compares each channel's name).
const MAX_PUBLISHERS = 1024;

/** Creates the BroadcastChannel transport. */
export function createMemoryPubSub(options: MemoryPubSubOptions): PubSub {
  return new MemoryPubSub(options);
}

class MemoryPubSub implements PubSub {
  readonly kind = "memory";
  readonly #capacity: number;
  readonly #prefix: string;
  readonly #onError: (err: unknown) => void;
  readonly #publishers = new Map<string, BroadcastChannel>();
  readonly #subscriptions = new Set<BufferedSubscription>();
  readonly #history: MemoryHistory;
  // Deno 2.9.6: when the last BroadcastChannel of an isolate closes, a channel opened before the
  // isolate's receive loop has stopped stays broken ("expected i32" on every later post).
  // Publishers close as runs end, so one channel stays open for the transport's lifetime.
  readonly #anchor: BroadcastChannel;
  // Publishers closing: after their last post has gone to the other isolates (below).
  readonly #closing = new Map<ReturnType<typeof setTimeout>, BroadcastChannel>();
  #closed = false;

  constructor(options: MemoryPubSubOptions) {
    assertCapacity(options.capacity);
    this.#capacity = options.capacity;
    this.#prefix = options.prefix;
    this.#onError = options.onError ?? (() => {});
    this.#history = new MemoryHistory(options.history ?? HISTORY_DEFAULTS);
    this.#anchor = new BroadcastChannel(`${this.#prefix}:\u0000open`);
  }

  append(channel: string, entries: Retained[], message: string): Promise<void> {
    if (!this.#closed) {
      for (const entry of entries) this.#history.append(channel, entry.seq, entry.message);
    }
    return this.publish(channel, message);
  }

  seal(channel: string): Promise<void> {
    this.#history.seal(channel);
    const name = `${this.#prefix}:${channel}`;
    const bc = this.#publishers.get(name);
    if (bc) {
      this.#publishers.delete(name);
      this.#closeLater(bc);
    }
    return Promise.resolve();
  }

  history(channel: string, after: number): Promise<HistoryPage | null> {
    return Promise.resolve(this.#history.read(channel, after));
  }

  publish(channel: string, message: string): Promise<void> {
    const name = `${this.#prefix}:${channel}`;
    if (this.#closed) {
      this.#onError(
        new PubSubError("publish_dropped", "publish after close", { channel: name }),
      );
      return Promise.resolve();
    }
    try {
      this.#publisher(name).postMessage(message);
    } catch (err) {
      this.#onError(
        new PubSubError("publish_dropped", "BroadcastChannel refused the message", {
          channel: name,
          cause: err,
        }),
      );
    }
    return Promise.resolve();
  }

  subscribe(channel: string): Promise<Subscription> {
    if (this.#closed) return Promise.reject(new Error("pubsub: subscribe after close"));
    const bc = new BroadcastChannel(`${this.#prefix}:${channel}`);
    const sub = new BufferedSubscription(this.#capacity, () => {
      bc.close();
      this.#subscriptions.delete(sub);
    });
    bc.onmessage = (event: MessageEvent) => {
      if (typeof event.data === "string") sub.push(event.data);
    };
    this.#subscriptions.add(sub);
    return Promise.resolve(sub);
  }

  close(): Promise<void> {
    this.#closed = true;
    for (const sub of [...this.#subscriptions]) sub.end("closed");
    for (const bc of this.#publishers.values()) bc.close();
    this.#publishers.clear();
    for (const [timer, bc] of this.#closing) {
      clearTimeout(timer);
      bc.close();
    }
    this.#closing.clear();
    this.#anchor.close();
    return Promise.resolve();
  }

  /**
   * Closes a publisher once its posts have left: Deno's `postMessage` sends to the other isolates
   * in a deferred callback that skips a channel closed meanwhile (its source since 2.9.6, which
   * still sends at once).
   */
  #closeLater(bc: BroadcastChannel): void {
    const timer = setTimeout(() => {
      this.#closing.delete(timer);
      bc.close();
    }, 0);
    Deno.unrefTimer(timer);
    this.#closing.set(timer, bc);
  }

  #publisher(name: string): BroadcastChannel {
    let bc = this.#publishers.get(name);
    if (bc) {
      this.#publishers.delete(name);
    } else {
      bc = new BroadcastChannel(name);
      if (this.#publishers.size >= MAX_PUBLISHERS) {
        const [oldest, old] = this.#publishers.entries().next().value!;
        this.#publishers.delete(oldest);
        this.#closeLater(old);
      }
    }
    this.#publishers.set(name, bc);
    return bc;
  }
}
