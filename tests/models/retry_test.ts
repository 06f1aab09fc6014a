/**
 * Retry arithmetic without waiting: backoff, jitter bounds, Retry-After parsing, status classes.
 */
import assert from "node:assert/strict";
import {
  baseBackoff,
  isTransientStatus,
  jitter,
  parseRetryAfter,
  retryDelay,
  statusCode,
} from "../../src/models/retry.ts";

const policy = { max_attempts: 6, initial_backoff: 500, max_backoff: 8000 };

Deno.test("backoff: doubles from initial_backoff and stops at max_backoff", () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => baseBackoff(policy, n)), [
    500,
    1000,
    2000,
    4000,
    8000,
    8000,
    8000,
  ]);
});

Deno.test("jitter: at most 10% of the base and at most 100 ms", () => {
  assert.equal(jitter(500, () => 0), 0);
  assert.equal(jitter(500, () => 0.999999), 49);
  assert.equal(jitter(8000, () => 0.999999), 99);
  assert.equal(jitter(0, () => 0.5), 0);
  for (let i = 0; i < 1000; i++) {
    const d = retryDelay(policy, 5);
    assert.ok(d >= 8000 && d <= 8100, String(d));
  }
});

Deno.test("retry delay: Retry-After raises the base, capped at max_backoff", () => {
  const none = () => 0;
  assert.equal(retryDelay(policy, 1, 3000, none), 3000);
  assert.equal(retryDelay(policy, 1, 60_000, none), 8000);
  assert.equal(retryDelay(policy, 3, 100, none), 2000, "never shorter than the backoff");
});

Deno.test("Retry-After: seconds, HTTP date, retry-after-ms, garbage", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "2" }), now), 2000);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "0.5" }), now), 500);
  assert.equal(
    parseRetryAfter(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }), now),
    3000,
  );
  assert.equal(
    parseRetryAfter(new Headers({ "retry-after": "Tue, 31 Dec 2024 23:00:00 GMT" }), now),
    0,
    "a date in the past means now",
  );
  assert.equal(parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" })), 250);
  assert.equal(parseRetryAfter({ "retry-after": "4" }), 4000);
  assert.equal(parseRetryAfter(new Headers({ "retry-after": "soon" })), undefined);
  assert.equal(parseRetryAfter(new Headers()), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
});

Deno.test("status classes: transient and codes", () => {
  for (const s of [408, 409, 429, 500, 502, 503, 504, 529]) assert.ok(isTransientStatus(s), `${s}`);
  for (const s of [400, 401, 403, 404, 413, 422]) assert.ok(!isTransientStatus(s), `${s}`);
  assert.equal(statusCode(401), "model_auth");
  assert.equal(statusCode(403), "model_auth");
  assert.equal(statusCode(429), "model_http_429");
});
