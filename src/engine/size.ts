/**
 * The size cap of a session (docs/api.md#size-limits): a client write may not take a session's
 * conversation past `runtime.max_session_bytes` of JSON; one message is at most a request body
 * (`http_server.max_body_bytes`), which bounds it as it is read. Checked when a client writes, so
 * every read that serves a conversation (a checkpoint, a snapshot on resume, a run's prompt) is
 * bounded in bytes too; a run's own output may take a session past the cap by what one run
 * writes, and the next client write is refused.
 */
import { engineErrors } from "./errors.ts";

/** The size of a message (or any record) as JSON, in UTF-16 code units. */
function size(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * Refuses `incoming` messages that would take the `conversation` past `maxBytes` of JSON: an
 * `EngineError` `too_large`. Measures the conversation only as far as it needs to.
 */
export function checkSessionRoom(
  conversation: readonly unknown[],
  incoming: readonly unknown[],
  maxBytes: number,
): void {
  let total = 0;
  for (const message of incoming) total += size(message);
  if (total === 0) return;
  for (const message of [null, ...conversation]) {
    if (message !== null) total += size(message);
    if (total > maxBytes) {
      throw engineErrors.tooLarge(
        `the session's conversation would pass ${maxBytes} bytes as JSON ` +
          `(runtime.max_session_bytes); start a new session or delete messages`,
      );
    }
  }
}
