/**
 * Waiting on a condition instead of sleeping: `eventually` polls a check until it holds, and fails
 * with the check's last complaint when it does not within the timeout.
 */

/** Options of `eventually`. */
export interface EventuallyOptions {
  /** Give up after this many ms (default 5000). */
  timeout?: number;
  /** Wait this many ms between attempts (default 20). */
  interval?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

/** The value `eventually` resolves with: the check's, without the "not yet" values. */
export type Settled<T> = Exclude<Awaited<T>, undefined | false>;

/**
 * Runs `check` until it neither throws nor returns `undefined` or `false`, and resolves with what
 * it returned. A check is a probe (returns the value once there is one, `undefined` before) or a
 * predicate; a check made of assertions ends with `return true`. Rejects after `timeout` ms with
 * the last error as the cause.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Settled<T>> {
  const { timeout = 5000, interval = 20, what = "the condition" } = options;
  const deadline = performance.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Settled<T>;
      last = undefined;
    } catch (error) {
      last = error;
    }
    if (performance.now() >= deadline) {
      const why = last instanceof Error
        ? `: ${last.message}`
        : " (the check kept returning undefined or false)";
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${why}`, { cause: last });
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
