/**
 * What a failed attempt was (models/failures.ts): the code, the provider's own words as the
 * message, and whether a retry can cure it — a timeout, an HTTP status (with `Retry-After`), a
 * connection that failed, an error part before any output, anything else.
 */
import assert from "node:assert/strict";
import { APICallError } from "@ai-sdk/provider";
import { classify, EarlyStreamError, errorMessage } from "../../src/models/failures.ts";
import type { Observed } from "../../src/models/observed_fetch.ts";

const observed = (more: Partial<Observed> = {}): Observed => ({
  firstByte: false,
  onFirstByte: () => {},
  ...more,
});
const apiError = (more: Partial<ConstructorParameters<typeof APICallError>[0]> = {}) =>
  new APICallError({ message: "call failed", url: "http://x", requestBodyValues: {}, ...more });

Deno.test("classify: a timeout, then HTTP statuses with the provider's words", () => {
  assert.deepEqual(classify(new Error("aborted"), observed(), true, 250), {
    code: "model_timeout",
    message: "no response stream within 250 ms",
    transient: true,
  });
  const headers = new Headers({ "retry-after": "2" });
  const limited = classify(
    apiError({ responseBody: '{"error":{"message":"slow down"}}' }),
    observed({ status: 429, headers }),
    false,
  );
  assert.deepEqual(limited, {
    code: "model_http_429",
    message: "HTTP 429: slow down",
    transient: true,
    status: 429,
    retryAfterMs: 2000,
  });
  const auth = classify(apiError({ responseBody: "bad key" }), observed({ status: 401 }), false);
  assert.deepEqual([auth.code, auth.message, auth.transient], [
    "model_auth",
    "HTTP 401: bad key",
    false,
  ]);
});

Deno.test("classify: a connection that failed, an early error part, anything else", () => {
  const refused = classify(
    new TypeError("fetch failed"),
    observed({ connectionError: new Error("connection refused") }),
    false,
  );
  assert.deepEqual(refused, {
    code: "model_connection",
    message: "connection failed: connection refused",
    transient: true,
  });
  // Anthropic's error events: an overload is worth a retry, a bad request is not.
  const overloaded = classify(
    new EarlyStreamError({ error: { type: "overloaded_error", message: "busy" } }),
    observed({ status: 200 }),
    false,
  );
  assert.deepEqual(overloaded, {
    code: "model_stream",
    message: "error event before any output: busy",
    transient: true,
  });
  const invalid = new EarlyStreamError({ type: "invalid_request_error", message: "no" });
  assert.equal(classify(invalid, observed({ status: 200 }), false).transient, false);
  // An OpenAI-style error frame in a 200 stream: the provider says whether to retry.
  const frame = classify(apiError({ isRetryable: false }), observed({ status: 200 }), false);
  assert.deepEqual([frame.code, frame.transient], ["model_stream", false]);
  assert.deepEqual(classify(new Error("odd"), observed(), false), {
    code: "model_error",
    message: "odd",
    transient: false,
  });
});

Deno.test("errorMessage: the provider's words from any shape, long bodies cut", () => {
  assert.equal(errorMessage(apiError({ responseBody: '{"message":"top"}' })), "top");
  assert.equal(errorMessage(apiError({ responseBody: '[{"error":"in a list"}]' })), "in a list");
  assert.equal(errorMessage(apiError({ responseBody: "x".repeat(400) })), `${"x".repeat(300)}...`);
  assert.equal(errorMessage(apiError()), "call failed");
  assert.equal(errorMessage({ error: { message: "nested" } }), "nested");
  assert.equal(errorMessage("plain"), "plain");
  assert.equal(errorMessage({ code: 7 }), '{"code":7}');
});
