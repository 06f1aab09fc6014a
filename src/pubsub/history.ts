/**
 * A channel's history kept for replay (a run's events, so a client can resume its stream from a
 * cursor): the settings every transport shares and the in-process history of the `memory`
 * transport. Redis and Upstash keep theirs in a Redis Stream per channel (see stream_history.ts).
 */

/** How long and how much history is kept. */
export interface HistorySettings {
  /** Milliseconds a channel's history is kept after it was sealed; 0 keeps no history at all. */
  retention: number;
  /** Messages kept per channel; older ones are trimmed first. */
  maxEvents: number;
  /** Memory transport only: characters of messages kept across all channels of the process. */
  maxBytes: number;
}

/** The defaults of `runtime.pubsub` (docs/pubsub.md). */
export const HISTORY_DEFAULTS: HistorySettings = {
  retention: 600_000,
  maxEvents: 10_000,
  maxBytes: 64 * 1024 * 1024,
};

/** One retained message and its sequence number in its channel. */
export interface Retained {
  /** Its sequence number in the channel (consecutive from 1). */
  seq: number;
  /** The message as published. */
  message: string;
}

/** What a channel's history holds after a cursor. */
export interface HistoryPage {
  /** The messages whose sequence number is greater than the cursor, oldest first. */
  entries: Retained[];
  /** The oldest retained sequence number (older ones were trimmed), null when nothing is kept. */
  first: number | null;
  /** The newest retained sequence number, null when nothing is kept. */
  last: number | null;
}

interface Log {
  entries: Retained[];
  /** Index of the oldest kept entry (trimming moves it instead of shifting the array). */
  head: number;
  chars: number;
  /** When the sealed history expires (epoch ms); null while it is open. */
  expiresAt: number | null;
}

/**
 * The `memory` transport's history: bounded per-channel logs in this process. Bounds: at most
 * `maxEvents` messages per channel, `maxBytes` characters in all (the oldest sealed logs go first,
 * then the oldest open ones), and a sealed log lives `retention` ms. Expired logs are dropped on
 * the next access, so no timer runs.
 */
export class MemoryHistory {
  readonly #s: HistorySettings;
  readonly #now: () => number;
  /** Logs still written to, oldest first. */
  readonly #open = new Map<string, Log>();
  /** Sealed logs in the order they were sealed, so the first one expires first. */
  readonly #sealed = new Map<string, Log>();
  #chars = 0;

  constructor(settings: HistorySettings, now: () => number = Date.now) {
    this.#s = settings;
    this.#now = now;
  }

  /** Characters held in all logs (for tests of the bounds). */
  get size(): number {
    return this.#chars;
  }

  /** Appends a message; a sequence number at or below the log's newest one is ignored. */
  append(channel: string, seq: number, message: string): void {
    if (this.#s.retention === 0) return;
    this.#expire();
    let log = this.#open.get(channel) ?? this.#sealed.get(channel);
    if (!log) {
      log = { entries: [], head: 0, chars: 0, expiresAt: null };
      this.#open.set(channel, log);
    }
    const newest = log.entries.at(-1);
    if (newest && log.entries.length > log.head && newest.seq >= seq) return;
    log.entries.push({ seq, message });
    log.chars += message.length;
    this.#chars += message.length;
    while (log.entries.length - log.head > this.#s.maxEvents) this.#trim(log);
    this.#bound(log);
  }

  /** Starts the retention window of a channel's log. */
  seal(channel: string): void {
    const log = this.#open.get(channel) ?? this.#sealed.get(channel);
    if (!log) return;
    this.#open.delete(channel);
    this.#sealed.delete(channel);
    log.expiresAt = this.#now() + this.#s.retention;
    this.#sealed.set(channel, log);
  }

  /** The messages after `after`, or null when no log of the channel is kept. */
  read(channel: string, after: number): HistoryPage | null {
    this.#expire();
    const log = this.#open.get(channel) ?? this.#sealed.get(channel);
    if (!log) return null;
    const kept = log.entries.length - log.head;
    if (kept === 0) return { entries: [], first: null, last: null };
    const first = log.entries[log.head].seq;
    const last = log.entries[log.entries.length - 1].seq;
    // Sequence numbers are consecutive, so the start is computed, not searched.
    const from = log.head + Math.max(0, Math.min(kept, after - first + 1));
    return { entries: log.entries.slice(from), first, last };
  }

  #trim(log: Log): void {
    const dropped = log.entries[log.head++];
    log.chars -= dropped.message.length;
    this.#chars -= dropped.message.length;
    if (log.head >= 1024 && log.head * 2 >= log.entries.length) {
      log.entries = log.entries.slice(log.head);
      log.head = 0;
    }
  }

  /**
   * Keeps the total within `maxBytes` after a write to `current`: drops the oldest sealed logs,
   * then the oldest other open ones, then trims `current` itself (down to its newest message).
   */
  #bound(current: Log): void {
    const over = () => this.#chars > this.#s.maxBytes;
    for (const logs of [this.#sealed, this.#open]) {
      for (const [channel, log] of logs) {
        if (!over()) return;
        if (log === current) continue;
        logs.delete(channel);
        this.#chars -= log.chars;
      }
    }
    while (over() && current.entries.length - current.head > 1) this.#trim(current);
  }

  #expire(): void {
    const now = this.#now();
    for (const [channel, log] of this.#sealed) {
      if (log.expiresAt! > now) return;
      this.#sealed.delete(channel);
      this.#chars -= log.chars;
    }
  }
}
