/**
 * The server-wide bound on tool calls running in sandbox processes at once
 * (`runtime.tools.max_processes`): every JavaScript and Python call holds a slot from before its
 * process is taken until that process has exited. A call that finds every slot taken waits for
 * one, at most its tool's `timeout`; so a burst of calls of a memory-hungry tool queues instead of
 * starting more processes than the host can hold.
 *
 * Waiting calls are served fairly across tenants: a freed slot goes to the waiting call of the
 * tenant that holds the fewest slots now, the oldest among equals (first come, first served within
 * a tenant). So one tenant's flood never makes another tenant's call wait past the next freed slot.
 */

/** Frees a slot (again: no effect). */
export type Release = () => void;

/** A call waiting for a slot. */
interface Waiter {
  tenant: string;
  grant: (release: Release) => void;
}

/** A counting semaphore of tool process slots, fair across tenants. */
export class ProcessSlots {
  /** How many calls may hold a slot at once. */
  readonly max: number;
  #held = 0;
  /** Slots held now, by tenant (tenants holding none are absent). */
  readonly #byTenant = new Map<string, number>();
  /** Waiting calls, oldest first. */
  #waiting: Waiter[] = [];

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
   * A slot for one call of `tenant`: at once when one is free, else when a holder releases it and
   * it is this call's turn; "cancelled" when `signal` aborts first, "timeout" once `timeout`
   * milliseconds have passed without one.
   */
  acquire(
    signal: AbortSignal,
    timeout: number,
    tenant = "",
  ): Promise<Release | "cancelled" | "timeout"> {
    if (signal.aborted) return Promise.resolve("cancelled");
    if (this.#held < this.max) {
      this.#held++;
      return Promise.resolve(this.#take(tenant));
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
      };
      const waiter: Waiter = {
        tenant,
        grant: (release) => {
          done();
          resolve(release);
        },
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
      this.#waiting.push(waiter);
    });
  }

  /** A slot just taken by `tenant`, and its release: the slot goes to the next waiter, or frees. */
  #take(tenant: string): Release {
    this.#byTenant.set(tenant, (this.#byTenant.get(tenant) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.#byTenant.get(tenant)! - 1;
      if (left > 0) this.#byTenant.set(tenant, left);
      else this.#byTenant.delete(tenant);
      const next = this.#next();
      if (next) next.grant(this.#take(next.tenant));
      else this.#held--;
    };
  }

  /** The waiter whose tenant holds the fewest slots now, the oldest among equals. */
  #next(): Waiter | undefined {
    let best: Waiter | undefined;
    let fewest = Infinity;
    for (const waiter of this.#waiting) {
      const holds = this.#byTenant.get(waiter.tenant) ?? 0;
      if (holds < fewest) {
        best = waiter;
        fewest = holds;
        if (holds === 0) break;
      }
    }
    return best;
  }
}
