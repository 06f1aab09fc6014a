/**
 * The error an OpenAI stream's error event stands for, as `@ai-sdk/openai@4.0.118` builds it
 * (`createOpenAIProviderStreamError` in its `dist/index.js`, not exported): the provider's message,
 * type and code, a status code inferred from them, and whether a retry can cure it.
 */
import { createProviderStreamError } from "@ai-sdk/provider-utils";

type Rec = Record<string, unknown>;

function asRecord(value: unknown): Rec | undefined {
  return typeof value === "object" && value != null ? value as Rec : undefined;
}

function stringOrNumber(value: unknown): string | number | undefined {
  return typeof value === "string" || typeof value === "number" ? value : undefined;
}

interface StreamError {
  message: string;
  code?: string | number;
  type?: string;
}

function parseStreamError(frame: unknown): StreamError | undefined {
  const value = asRecord(frame);
  if (value == null) return undefined;
  if (value.type === "response.failed") {
    const responseError = asRecord(asRecord(value.response)?.error);
    return typeof responseError?.message === "string"
      ? {
        message: responseError.message,
        code: stringOrNumber(responseError.code),
        type: "response.failed",
      }
      : undefined;
  }
  const error = asRecord(value.error) ?? value;
  return typeof error.message === "string" &&
      (asRecord(value.error) != null || typeof error.type === "string" || "code" in error ||
        "param" in error)
    ? {
      message: error.message,
      code: stringOrNumber(error.code),
      type: typeof error.type === "string" ? error.type : undefined,
    }
    : undefined;
}

function httpStatusCode(value: unknown): number | undefined {
  const code = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599
    ? code
    : undefined;
}

function statusCodeOf(error: StreamError): number {
  const explicit = httpStatusCode(error.code);
  if (explicit != null) return explicit;
  const discriminator = [error.code, error.type]
    .filter((v) => typeof v === "string" || typeof v === "number").join(" ").toLowerCase();
  const has = (...terms: string[]) => terms.some((t) => discriminator.includes(t));
  if (has("insufficient_quota", "rate_limit")) return 429;
  if (has("authentication")) return 401;
  if (has("permission")) return 403;
  if (has("not_found")) return 404;
  if (has("invalid", "bad_request", "context_length")) return 400;
  if (has("overload")) return 503;
  if (has("timeout")) return 504;
  return 500;
}

function isRetryable(error: StreamError, statusCode: number): boolean {
  if (error.code === "insufficient_quota" || error.type === "insufficient_quota") return false;
  return statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500;
}

/** The provider stream error of an error event's `error`, or undefined when it names none. */
export function openaiStreamError(frame: unknown): unknown {
  const streamError = parseStreamError(frame);
  if (streamError == null) return undefined;
  const statusCode = statusCodeOf(streamError);
  return createProviderStreamError({
    message: streamError.message,
    type: streamError.type,
    code: streamError.code,
    statusCode,
    isRetryable: isRetryable(streamError, statusCode),
    data: frame,
  });
}
