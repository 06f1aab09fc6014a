/**
 * The bound on what resumed streams replay at once: the large retained messages (snapshots of long
 * conversations) that streams decode and encode to replay them are held to
 * `runtime.attached.max_replay_bytes` together, over all runs. A message already held for one
 * stream costs nothing more for another (they share it, see stream.ts); a stream that would pass
 * the bound waits for others to finish their replay, and is refused (`at_capacity`, 503004) when
 * none did within `waitMs`. One replay alone is always let through, however large.
 */
import { runServiceErrors } from "./errors.ts";

/** Large messages held for replay, by key, and the streams waiting for room. */
export class ReplayBudget {
  readonly #maxBytes: number;
  readonly #waitMs: number;
  #held = 0;
  readonly #holders = new Map<string, { bytes: number; count: number }>();
  readonly #waiting: (() => void)[] = [];

  /** A budget of `maxBytes`; a stream waits at most `waitMs` for room. */
  constructor(maxBytes: number, waitMs: number) {
    this.#maxBytes = maxBytes;
    this.#waitMs = waitMs;
  }

  /** Bytes held for replays now. */
  get held(): number {
    return this.#held;
  }

  /**
   * Holds the retained `entries` of `channel` of `minChars` or more (none: a release that does
   * nothing), as `hold` does.
   */
  holdLarge(
    channel: string,
    entries: readonly { seq: number; message: string }[] = [],
    minChars: number,
  ): Promise<() => void> {
    const need = entries.filter((e) => e.message.length >= minChars)
      .map((e) => ({ key: `${channel}\n${e.seq}`, bytes: e.message.length }));
    return need.length === 0 ? Promise.resolve(NOTHING) : this.hold(need);
  }

  /**
   * Holds the messages `need` (key and bytes) for one stream's replay, waiting for room; resolves
   * with the release, to call once (when the stream has replayed them or ends).
   */
  async hold(need: { key: string; bytes: number }[]): Promise<() => void> {
    const started = performance.now();
    while (!this.#fits(need)) {
      const left = this.#waitMs - (performance.now() - started);
      if (left <= 0) {
        throw runServiceErrors.atCapacity(
          `streams replaying large events hold runtime.attached.max_replay_bytes ` +
            `(${this.#maxBytes}) on this replica; retry later`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, left);
        const waiter = () => wake();
        function wake() {
          clearTimeout(timer);
          resolve();
        }
        this.#waiting.push(waiter);
      });
    }
    for (const { key, bytes } of need) {
      const holder = this.#holders.get(key);
      if (holder) holder.count++;
      else {
        this.#holders.set(key, { bytes, count: 1 });
        this.#held += bytes;
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const { key } of need) {
        const holder = this.#holders.get(key)!;
        if (--holder.count > 0) continue;
        this.#holders.delete(key);
        this.#held -= holder.bytes;
      }
      // Every waiter looks again; those that still do not fit wait on.
      for (const wake of this.#waiting.splice(0)) wake();
    };
  }

  /**
   * `stream`, whose `release` is called when it is collected: a stream dropped before it was read
   * has no `finally` to run (a second call of a release does nothing).
   */
  releaseWhenCollected<T extends object>(stream: T, release: () => void): T {
    if (release !== NOTHING) unread.register(stream, release);
    return stream;
  }

  /** Whether `need` fits beside what is held (always, when nothing is). */
  #fits(need: { key: string; bytes: number }[]): boolean {
    let more = 0;
    for (const { key, bytes } of need) if (!this.#holders.has(key)) more += bytes;
    return more === 0 || this.#held === 0 || this.#held + more <= this.#maxBytes;
  }
}

/** The releases of streams collected without having been read. */
const unread = new FinalizationRegistry<() => void>((release) => release());

/** The release of a stream that holds nothing. */
const NOTHING = () => {};
