/**
 * Retry policy arithmetic: the backoff before each retry, `Retry-After` parsing and which
 * failures count as transient. Pure functions, so the numbers are tested without waiting.
 */
import type { RetryConfig } from "../config/schema/agent.ts";

/** The retry policy used when neither the manifest nor the run configures one. */
export const DEFAULT_RETRY: RetryConfig = Object.freeze({
  max_attempts: 3,
  initial_backoff: 500,
  max_backoff: 8000,
});

/** Upper bound of the jitter: 10% of the base delay, at most this many milliseconds. */
export const MAX_JITTER_MS = 100;

/**
 * The base delay before retry `n` (1 for the first retry): `initial_backoff * 2^(n-1)`, capped at
 * `max_backoff`.
 */
export function baseBackoff(retry: RetryConfig, n: number): number {
  return Math.min(retry.initial_backoff * 2 ** (n - 1), retry.max_backoff);
}

/** A random jitter in `[0, min(10% of base, 100 ms)]` so that many clients do not retry in step. */
export function jitter(base: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(base * 0.1, MAX_JITTER_MS));
}

/**
 * The delay before retry `n`: the exponential base, raised to the server's `Retry-After` when
 * there is one (that value capped at `max_backoff`), plus jitter.
 */
export function retryDelay(
  retry: RetryConfig,
  n: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  let base = baseBackoff(retry, n);
  // Waiting less than the server asked would only earn another 429; waiting longer than
  // max_backoff would break the caller's bound on a step, so the server's value is capped.
  if (retryAfterMs !== undefined) base = Math.max(base, Math.min(retryAfterMs, retry.max_backoff));
  return base + jitter(base, random);
}

/**
 * Milliseconds a response asks to wait: `retry-after-ms` (OpenAI), else `Retry-After` in seconds
 * or as an HTTP date. Undefined when absent or unparseable.
 */
export function parseRetryAfter(
  headers: Headers | Record<string, string> | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | null =>
    headers instanceof Headers
      ? headers.get(name)
      : headers[name] ?? headers[name.toLowerCase()] ?? null;
  const ms = get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const value = get("retry-after");
  if (value === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Whether an HTTP status is worth another attempt: 408, 409, 429 and every 5xx. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The error code of an HTTP failure status. */
export function statusCode(status: number): string {
  return status === 401 || status === 403 ? "model_auth" : `model_http_${status}`;
}
