/**
 * A clock a test moves on by hand, so records get distinct, ordered timestamps without sleeping.
 * It keeps running with the real time (leases and heartbeats stay meaningful); `advance` only adds
 * an offset.
 */
import type { Clock } from "../../src/clock.ts";

/** The real time plus an offset the test controls. */
export class TestClock implements Clock {
  #offset = 0;

  /** The current time as the services see it, epoch ms. */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** Moves the time on by `ms` (default 1): the next record is at least that much later. */
  advance(ms = 1): void {
    this.#offset += ms;
  }

  /** `now()` as an RFC 3339 string, as records show it. */
  iso(): string {
    return new Date(this.now()).toISOString();
  }
}
