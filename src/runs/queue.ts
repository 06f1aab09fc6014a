/**
 * An unbounded single-consumer async queue: the producer never waits, the consumer iterates.
 * Used to hand a run's events from its executor to the attached HTTP stream.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | null = null;
  #ended = false;

  /** Adds an item; ignored after `end()`. */
  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  /** Ends the queue; the consumer gets the remaining items and then stops. */
  end(): void {
    this.#ended = true;
    if (this.#waiting && this.#items.length === 0) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  /** True once `end()` was called. */
  get ended(): boolean {
    return this.#ended;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length > 0) {
          return Promise.resolve({ value: this.#items.shift()!, done: false });
        }
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiting = resolve));
      },
      return: () => {
        this.#ended = true;
        this.#items = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
