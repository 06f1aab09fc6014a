/**
 * What a transport reports through `onError` instead of throwing: the run that publishes must not
 * fail because nobody can currently listen, so such failures are counted and logged, not raised.
 * What it does throw — a reader that cannot subscribe or read a history now — is
 * `PubSubUnavailable`.
 */

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
 * The transport cannot subscribe or read a history now (Redis down, Upstash unreachable): nobody's
 * mistake, and worth retrying. The HTTP edge answers it 503 (503001), so a re-attaching client
 * learns to retry later rather than seeing a 500.
 */
export class PubSubUnavailable extends Error {
  /** What is unavailable, for the message ("the event history (Redis)"). */
  readonly what: string;

  /** `what` is unavailable; `cause` is the transport's failure. */
  constructor(what: string, cause: unknown) {
    super(`${what} is unavailable`, { cause });
    this.name = "PubSubUnavailable";
    this.what = what;
  }
}

/** The error `subscribe()` and `history()` throw when the transport cannot answer now. */
export function transportUnavailable(what: string, cause: unknown): PubSubUnavailable {
  return new PubSubUnavailable(what, cause);
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
