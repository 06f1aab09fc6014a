/**
 * The subscriber side every transport shares: a bounded buffer between a transport that pushes
 * messages as they arrive and a consumer that pulls them with `for await`. The transport never
 * waits for the consumer; a consumer that falls `capacity` messages behind is cut off instead.
 */
import type { Subscription, SubscriptionEnd } from "./types.ts";

/** Throws unless `capacity` is a positive integer (checked when a transport is created). */
export function assertCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`pubsub capacity must be a positive integer, got ${capacity}`);
  }
}

/**
 * A live subscription fed by a transport through `push`, ended by the consumer (`close`), by its
 * own buffer (`overflow`) or by the transport (`end("transport_lost")`).
 */
export class BufferedSubscription implements Subscription {
  readonly #capacity: number;
  readonly #onEnd: (reason: SubscriptionEnd) => void;
  // A head index instead of `shift()`: shifting a large array is linear in its length, and a
  // buffer can hold up to `capacity` (millions) of messages.
  #buffer: string[] = [];
  #head = 0;
  #readers: PromiseWithResolvers<IteratorResult<string>>[] = [];
  #reason: SubscriptionEnd | undefined;
  readonly #ended = Promise.withResolvers<SubscriptionEnd>();

  /**
   * `capacity` is how many undelivered messages the buffer holds; `onEnd` runs once, when the
   * subscription ends for any reason, so the transport can release what it holds for it.
   */
  constructor(capacity: number, onEnd: (reason: SubscriptionEnd) => void = () => {}) {
    assertCapacity(capacity);
    this.#capacity = capacity;
    this.#onEnd = onEnd;
  }

  /** Resolves with the reason once the subscription has ended. */
  get ended(): Promise<SubscriptionEnd> {
    return this.#ended.promise;
  }

  /** Whether the subscription has ended (and `push` is a no-op). */
  get isEnded(): boolean {
    return this.#reason !== undefined;
  }

  /** Undelivered messages currently buffered. */
  get buffered(): number {
    return this.#buffer.length - this.#head;
  }

  /**
   * Hands one message to the consumer: to a waiting `next()` at once, else into the buffer. The
   * message that would make the buffer hold more than `capacity` ends the subscription with
   * `overflow` instead; never blocks.
   */
  push(message: string): void {
    if (this.#reason !== undefined) return;
    const reader = this.#readers.shift();
    if (reader) {
      reader.resolve({ value: message, done: false });
      return;
    }
    if (this.buffered >= this.#capacity) {
      this.end("overflow");
      return;
    }
    this.#buffer.push(message);
  }

  /**
   * Ends the subscription (idempotent; the first reason wins). Iteration stops at once: messages
   * still buffered are dropped, because every end reason means the stream has a gap from here on
   * and the consumer must reattach either way.
   */
  end(reason: SubscriptionEnd): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#buffer = [];
    this.#head = 0;
    for (const reader of this.#readers.splice(0)) reader.resolve({ value: undefined, done: true });
    this.#ended.resolve(reason);
    try {
      this.#onEnd(reason);
    } catch {
      // Releasing transport resources is best effort; the subscription has ended regardless.
    }
  }

  /** Stops delivery; pending iteration ends and `ended` resolves with `closed`. */
  close(): void {
    this.end("closed");
  }

  /** Iterates the messages; leaving the loop early (`break`, `return`, a throw) closes it. */
  [Symbol.asyncIterator](): AsyncIterableIterator<string> {
    return {
      next: () => this.#next(),
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  #next(): Promise<IteratorResult<string>> {
    if (this.#head < this.#buffer.length) {
      const value = this.#buffer[this.#head++];
      if (this.#head === this.#buffer.length) {
        this.#buffer = [];
        this.#head = 0;
      } else if (this.#head >= 1024 && this.#head * 2 >= this.#buffer.length) {
        this.#buffer = this.#buffer.slice(this.#head);
        this.#head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.#reason !== undefined) return Promise.resolve({ value: undefined, done: true });
    const reader = Promise.withResolvers<IteratorResult<string>>();
    this.#readers.push(reader);
    return reader.promise;
  }
}
