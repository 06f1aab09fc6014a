/**
 * A bounded single-consumer async queue: hands a run's events from its executor to the attached
 * HTTP stream. The producer adds while the consumer is fewer than `capacity` items (and, with
 * `maxBytes`, fewer than that many bytes) behind; when it is not, the producer waits for room
 * (`room`), so a slow client holds back its run instead of growing this process's memory, and the
 * caller decides how long to wait.
 */

/** The byte bound of an `AsyncQueue`: at most `maxBytes` of items by `sizeOf` (one item always). */
export interface QueueBytes<T> {
  maxBytes: number;
  sizeOf: (item: T) => number;
}

export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #capacity: number;
  // A head index instead of `shift()`, which is linear in the length.
  #items: T[] = [];
  #head = 0;
  #waiting: ((r: IteratorResult<T>) => void) | null = null;
  #roomWaiter: ((room: boolean) => void) | null = null;
  #ended = false;
  readonly #bytes: QueueBytes<T> | undefined;
  /** The sizes of the items not yet taken, in step with `#items`, and their sum. */
  #sizes: number[] = [];
  #queuedBytes = 0;

  /**
   * `capacity`: items the consumer may fall behind before `push` refuses; `bytes`: the bytes it
   * may fall behind too.
   */
  constructor(capacity: number, bytes?: QueueBytes<T>) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
    }
    this.#capacity = capacity;
    this.#bytes = bytes;
  }

  /** Whether the consumer is as far behind as it may be. */
  #full(): boolean {
    return this.size >= this.#capacity ||
      (this.#bytes !== undefined && this.size > 0 && this.#queuedBytes >= this.#bytes.maxBytes);
  }

  /** Items not yet taken by the consumer. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** True once `end()` was called or the consumer stopped. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Adds an item: true when it was taken (or dropped because the queue ended), false when the
   * queue is full; then wait for `room()` and push again.
   */
  push(item: T): boolean {
    if (this.#ended) return true;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: item, done: false });
      return true;
    }
    if (this.#full()) return false;
    this.#items.push(item);
    if (this.#bytes) {
      const size = this.#bytes.sizeOf(item);
      this.#sizes.push(size);
      this.#queuedBytes += size;
    }
    return true;
  }

  /**
   * Resolves true once the consumer made room (or the queue ended: a push then drops the item),
   * false when `ms` pass first. One producer waits at a time.
   */
  room(ms: number): Promise<boolean> {
    if (this.#ended || !this.#full()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#roomWaiter = null;
        resolve(false);
      }, ms);
      this.#roomWaiter = (room) => {
        clearTimeout(timer);
        this.#roomWaiter = null;
        resolve(room);
      };
    });
  }

  /**
   * Ends the queue; the consumer gets the remaining items, then `last` when given (it may exceed
   * the capacity by that one item), then stops.
   */
  end(last?: T): void {
    if (this.#ended) return;
    if (last !== undefined) {
      if (this.#waiting) {
        const resolve = this.#waiting;
        this.#waiting = null;
        resolve({ value: last, done: false });
      } else {
        this.#items.push(last);
        this.#sizes.push(0);
      }
    }
    this.#ended = true;
    this.#roomWaiter?.(true);
    if (this.#waiting && this.size === 0) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  #take(): T {
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined as T;
    if (this.#bytes) this.#queuedBytes -= this.#sizes[this.#head] ?? 0;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#sizes = [];
      this.#head = 0;
      this.#queuedBytes = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      if (this.#bytes) this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
    if (!this.#full()) this.#roomWaiter?.(true);
    return item;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.size > 0) return Promise.resolve({ value: this.#take(), done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
      return: () => {
        // The consumer went away: nothing will be taken any more, so stop holding items.
        this.#ended = true;
        this.#items = [];
        this.#sizes = [];
        this.#queuedBytes = 0;
        this.#head = 0;
        this.#roomWaiter?.(true);
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
