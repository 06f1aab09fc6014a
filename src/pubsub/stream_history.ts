/**
 * A channel's history as the `redis` transports (node-redis and Upstash) keep it: a Redis Stream
 * per channel, an entry per message with the message's sequence number as its id (`<seq>-0`),
 * and a TTL that keeps a history alive while its channel is written to and starts the retention
 * window once it is sealed.
 */

/**
 * While a channel is still written to (its run is running) a Redis history lives this long past
 * the retention window, refreshed by the writes; sealing sets the retention window proper. It only
 * matters when no replica is left to seal it (all of them died mid-run).
 */
export const OPEN_HISTORY_TTL_MS = 3_600_000;

/** How often an open Redis history's TTL is refreshed by a write. */
export const TTL_REFRESH_MS = 60_000;

/** What a channel's name is followed by in the key of its history. */
export const HISTORY_SUFFIX = ":history";

/** The Redis Stream holding a channel's history. */
export function historyKey(channel: string): string {
  return `${channel}${HISTORY_SUFFIX}`;
}

/** The stream entry id of a message's sequence number. */
export function entryId(seq: number): string {
  return `${seq}-0`;
}

/** The sequence number of a stream entry id (`<seq>-0`). */
export function seqOf(id: string): number {
  return Number(id.slice(0, id.indexOf("-")));
}

/** The open histories of one transport: when a write last refreshed each one's TTL. */
export class OpenHistories {
  /** When each open history's TTL was last refreshed (removed when it is sealed). */
  readonly #refreshed = new Map<string, number>();

  /**
   * The TTL in ms a write to the history `key` sets with a `retention` window, or 0 when a write
   * refreshed it less than `TTL_REFRESH_MS` ago.
   */
  ttlDue(key: string, retention: number): number {
    const now = Date.now();
    if (now - (this.#refreshed.get(key) ?? 0) < TTL_REFRESH_MS) return 0;
    this.#refreshed.set(key, now);
    return retention + OPEN_HISTORY_TTL_MS;
  }

  /** Forgets the history `key`: it was sealed, and its TTL is the retention window now. */
  sealed(key: string): void {
    this.#refreshed.delete(key);
  }
}
