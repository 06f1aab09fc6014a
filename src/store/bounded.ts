/**
 * Bounded waits on the store: every call settles within the storage timeout, and a failure that
 * means "the database cannot be reached" (the implementation decides which) becomes one
 * `StoreUnavailable`, so an outage answers 503 at once instead of hanging a request or looking
 * like a bug (500). The timed-out call is not cancelled: it settles in the background (a write
 * may still commit once the database answers; ids make a client's retry a 409, not a duplicate).
 */
import { StoreUnavailable } from "./errors.ts";
import type { Store } from "./types.ts";

/** Options of `boundedStore`. */
export interface BoundOptions {
  /** Milliseconds a call may take before it is `StoreUnavailable`. */
  timeoutMs: number;
  /** Whether an error of the implementation means the database is unreachable. */
  isOutage(error: unknown): boolean;
}

// Not bounded: opening and closing are the caller's own business (startup fails on its own).
const UNBOUNDED = new Set<string | symbol>(["migrate", "close"]);

/** `store` with every call bounded by the timeout and outages turned into `StoreUnavailable`. */
export function boundedStore<S extends Store>(store: S, options: BoundOptions): S {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      // Called on the store itself: its methods use private fields, which a proxy does not have.
      if (UNBOUNDED.has(key)) return value.bind(target);
      const method = String(key);
      return (...args: unknown[]) => bounded(method, () => value.apply(target, args), options);
    },
  });
}

async function bounded<T>(method: string, call: () => Promise<T>, options: BoundOptions) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailable(method, `no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
  });
  const pending = call();
  // A call that loses the race still settles later; its rejection must not go unhandled.
  pending.catch(() => {});
  try {
    return await Promise.race([pending, deadline]);
  } catch (error) {
    if (error instanceof StoreUnavailable || !options.isOutage(error)) throw error;
    throw new StoreUnavailable(method, describe(error), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** A short reason for logs: the driver's code and message, no query or parameters. */
function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? `${e.code}: ` : "";
  return `${code}${typeof e?.message === "string" ? e.message : String(error)}`;
}
