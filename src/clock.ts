/**
 * The wall clock the services read for what they record (created/updated times, heartbeats, lease
 * sweeps). It is injected rather than read from `Date.now()` everywhere so a test can move time on
 * instead of sleeping for a new millisecond.
 */

/** A source of the current time in epoch milliseconds. */
export interface Clock {
  /** The current time, epoch milliseconds. */
  now(): number;
}

/** The real time (`Date.now()`): the default of every service that takes a clock. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });
