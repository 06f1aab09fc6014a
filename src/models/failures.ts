/**
 * What a failed attempt to establish a model stream was: our error code (`model_timeout`,
 * `model_http_<status>`, `model_auth`, `model_connection`, `model_stream`, `model_error`), the
 * provider's own words as the message, and whether a retry can cure it.
 */
import { APICallError } from "@ai-sdk/provider";
import type { Observed } from "./observed_fetch.ts";
import { isTransientStatus, parseRetryAfter, statusCode } from "./retry.ts";

/** An error part the provider streamed before any output. */
export class EarlyStreamError extends Error {
  /** The part's error, as the provider gave it. */
  readonly error: unknown;

  /** The early error part's `error`. */
  constructor(error: unknown) {
    super(errorMessage(error));
    this.error = error;
  }
}

/** A classified attempt failure. */
export interface Failure {
  /** Our error code; the failed run's `error.code`. */
  code: string;
  /** What went wrong, in the provider's words where it gave some. */
  message: string;
  /** Whether a retry can cure it. */
  transient: boolean;
  /** The HTTP status the provider answered with, when it answered one. */
  status?: number;
  /** The provider's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
}

/**
 * Error frame types and codes a retry can cure, whichever provider streams them: Anthropic's
 * event types, OpenAI's (and OpenAI-compatible servers') `server_error` and rate limits. The same
 * frame is retried the same on every provider that speaks its wire.
 */
const TRANSIENT_ERROR_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
  "server_error",
  "service_unavailable",
  "rate_limit_exceeded",
]);

/** Whether `value` is a non-null object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The provider's message from an error body (`{error:{message}}`, `{message}`, `{error}`). */
function bodyMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const candidates = Array.isArray(parsed) ? parsed : [parsed];
    for (const c of candidates) {
      if (!isRecord(c)) continue;
      if (isRecord(c.error) && typeof c.error.message === "string") return c.error.message;
      if (typeof c.message === "string") return c.message;
      if (typeof c.error === "string") return c.error;
    }
  } catch {
    const text = body.trim();
    if (text) return text.length > 300 ? `${text.slice(0, 300)}...` : text;
  }
  return undefined;
}

/** The most informative message of an error: the provider's own words when there are some. */
export function errorMessage(error: unknown): string {
  if (APICallError.isInstance(error)) {
    return (error.responseBody ? bodyMessage(error.responseBody) : undefined) ?? error.message;
  }
  if (error instanceof Error) return error.message;
  if (isRecord(error)) {
    if (typeof error.message === "string") return error.message;
    if (isRecord(error.error) && typeof error.error.message === "string") {
      return error.error.message;
    }
  }
  return typeof error === "string" ? error : JSON.stringify(error);
}

/** Whether an error event streamed before any output is worth a retry. */
function isTransientStreamError(error: unknown): boolean {
  if (!isRecord(error)) return false;
  if (typeof error.isRetryable === "boolean") return error.isRetryable;
  if (typeof error.statusCode === "number") return isTransientStatus(error.statusCode);
  const inner = isRecord(error.error) ? error.error : error;
  return [error.type, error.code, inner.type, inner.code].some((v) =>
    typeof v === "string" && TRANSIENT_ERROR_TYPES.has(v)
  );
}

/**
 * Classifies an attempt failure into our error code and whether it is transient, from the error
 * thrown and what the fetch wrapper observed.
 */
export function classify(
  error: unknown,
  observed: Observed,
  timedOut: boolean,
  timeout?: number,
): Failure {
  if (timedOut) {
    return {
      code: "model_timeout",
      message: `no response stream within ${timeout} ms`,
      transient: true,
    };
  }
  if (error instanceof EarlyStreamError) {
    return {
      code: "model_stream",
      message: `error event before any output: ${error.message}`,
      transient: isTransientStreamError(error.error),
    };
  }
  const status = observed.status !== undefined && observed.status >= 400
    ? observed.status
    : undefined;
  if (status !== undefined) {
    return {
      code: statusCode(status),
      message: `HTTP ${status}: ${errorMessage(error)}`,
      transient: isTransientStatus(status),
      status,
      retryAfterMs: parseRetryAfter(observed.headers),
    };
  }
  if (observed.connectionError !== undefined || observed.bodyError !== undefined) {
    return {
      code: "model_connection",
      message: `connection failed: ${errorMessage(observed.connectionError ?? observed.bodyError)}`,
      transient: true,
    };
  }
  if (APICallError.isInstance(error) && observed.status !== undefined) {
    // An OpenAI-style error frame in a 200 stream before any output.
    return {
      code: "model_stream",
      message: `error event before any output: ${errorMessage(error)}`,
      // The provider decides here: OpenAI marks e.g. insufficient_quota as final.
      transient: error.isRetryable,
    };
  }
  return { code: "model_error", message: errorMessage(error), transient: false };
}
