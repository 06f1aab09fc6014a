/**
 * The size caps of a client write (docs/api.md#size-limits): no message may pass
 * `runtime.max_message_bytes` of JSON, and no write may take a session's conversation past
 * `runtime.max_session_bytes`. Checked when a client writes, before anything is written, so every
 * read that serves a conversation (a checkpoint, a snapshot on resume, a run's prompt) is bounded
 * in bytes too. A run's own output is held to the session cap as it is written (`SessionFull`,
 * thrown by the step writer).
 */
import { engineErrors } from "./errors.ts";

/** The two caps, as `runtime` configures them. */
export interface SizeLimits {
  /** `runtime.max_message_bytes`. */
  max_message_bytes: number;
  /** `runtime.max_session_bytes`. */
  max_session_bytes: number;
}

/** The size of a message (or any record) as JSON, in UTF-16 code units. */
export function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * Refuses `incoming` messages when one of them passes `max_message_bytes` of JSON (an
 * `EngineError` `message_too_large`) or together they would take the `conversation` past
 * `max_session_bytes` (`too_large`). Returns the conversation's bytes (without `incoming`).
 */
export function checkSessionRoom(
  conversation: readonly unknown[],
  incoming: readonly unknown[],
  limits: SizeLimits,
): number {
  let total = 0;
  for (const [i, message] of incoming.entries()) {
    const bytes = jsonSize(message);
    if (bytes > limits.max_message_bytes) {
      throw engineErrors.messageTooLarge(
        `message ${i} is ${bytes} bytes as JSON, over the limit of ${limits.max_message_bytes} ` +
          `(runtime.max_message_bytes)`,
      );
    }
    total += bytes;
  }
  let held = 0;
  for (const message of conversation) held += jsonSize(message);
  if (total > 0 && held + total > limits.max_session_bytes) {
    throw engineErrors.tooLarge(
      `the session's conversation would pass ${limits.max_session_bytes} bytes as JSON ` +
        `(runtime.max_session_bytes); start a new session or delete messages`,
    );
  }
  return held;
}

/**
 * A run's own output that would take its session past `runtime.max_session_bytes`: the run ends
 * `failed` with `session_too_large`, and the message that did not fit is not written.
 */
export class SessionFull extends Error {
  /** The message of `maxBytes` that did not fit. */
  constructor(maxBytes: number) {
    super(
      `the run's output would take the session's conversation past ${maxBytes} bytes as JSON ` +
        `(runtime.max_session_bytes); start a new session or delete messages`,
    );
    this.name = "SessionFull";
  }
}
