/**
 * What a transport reports through `onError` instead of throwing: the run that publishes must not
 * fail because nobody can currently listen, so such failures are counted and logged, not raised.
 */
import { type ApiError, errors } from "../errors.ts";

/** Kinds of absorbed failure: a message not delivered, a connection lost, a cleanup that failed. */
export type PubSubErrorCode = "publish_dropped" | "transport_lost" | "cleanup_failed";

/** A failure a transport absorbed; `onError` receives it. */
export class PubSubError extends Error {
  /** What went wrong. */
  readonly code: PubSubErrorCode;
  /** The full (prefixed) channel name, when one channel is concerned. */
  readonly channel?: string;

  /** An error of `code`, with the message and the failure that caused it. */
  constructor(
    code: PubSubErrorCode,
    message: string,
    options: { channel?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "PubSubError";
    this.code = code;
    this.channel = options.channel;
  }
}

/**
 * The error `subscribe()` throws when the transport cannot subscribe now: a 503 the HTTP layer
 * returns as is, so a reattaching client learns to retry later rather than seeing a 500.
 */
export function transportUnavailable(what: string, cause: unknown): ApiError {
  const err = errors.unavailable(what);
  err.cause = cause;
  return err;
}

/** `redis://user:secret@host` → `redis://user:***@host`, for messages that may be logged. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<invalid url>";
  }
}

/** The message of any thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
