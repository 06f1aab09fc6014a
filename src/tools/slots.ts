/**
 * The server-wide bound on tool calls running in sandbox processes at once
 * (`runtime.tools.max_processes`): every JavaScript and Python call holds a slot from before its
 * process is taken until that process has exited. A call that finds every slot taken waits for
 * one, first come first served, at most its tool's `timeout`; so a burst of calls of a
 * memory-hungry tool queues instead of starting more processes than the host can hold.
 */

/** Frees a slot (again: no effect). */
export type Release = () => void;

/** A counting semaphore of tool process slots. */
export class ProcessSlots {
  /** How many calls may hold a slot at once. */
  readonly max: number;
  #held = 0;
  /** Waiting calls, oldest first: each is handed a freed slot. */
  #waiting: ((release: Release) => void)[] = [];

  /** Slots for `max` calls at once. */
  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError("max must be an integer ≥ 1");
    this.max = max;
  }

  /** Calls holding a slot now. */
  get held(): number {
    return this.#held;
  }

  /** Calls waiting for one now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * A slot for one call: at once when one is free, else when a holder releases it; "cancelled"
   * when `signal` aborts first, "timeout" once `timeout` milliseconds have passed without one.
   */
  acquire(signal: AbortSignal, timeout: number): Promise<Release | "cancelled" | "timeout"> {
    if (signal.aborted) return Promise.resolve("cancelled");
    if (this.#held < this.max) {
      this.#held++;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiting = this.#waiting.filter((w) => w !== grant);
      };
      const grant = (release: Release) => {
        done();
        resolve(release);
      };
      const onAbort = () => {
        done();
        resolve("cancelled");
      };
      const timer = setTimeout(() => {
        done();
        resolve("timeout");
      }, timeout);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(grant);
    });
  }

  /** A release for a slot just taken: hands it to the oldest waiting call, or frees it. */
  #release(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next(this.#release());
      else this.#held--;
    };
  }
}
