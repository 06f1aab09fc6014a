/**
 * Delivery of a run's events: each is numbered (its sequence number in the run, the cursor of
 * every protocol), handed to the attached client's bounded queue (the run waits for a slow client,
 * then drops it), kept in the run's history and published on its channel — and on its chain's —
 * as one message per run and turn of the event loop.
 */
import { clearImmediate, setImmediate } from "node:timers";
import {
  encodeEvent,
  type EndNotice,
  type RunEvent,
  type RunEventOf,
  type SequencedEvent,
} from "../api/events.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import type { ActiveRun } from "./active.ts";
import { chainChannel } from "./chains.ts";
import { AsyncQueue } from "./queue.ts";
import { runChannel } from "./channel.ts";

/** The limits of an attached client's queue (manifest `runtime.attached`). */
export type AttachedLimits =
  & Pick<Config["manifest"]["runtime"]["attached"], "buffer" | "drain_timeout">
  & { max_unread_bytes?: number };

/**
 * Events of one run held back while its lease is in doubt, at most; past that they go out (a
 * store outage must not grow memory without bound).
 */
const HOLD_MAX = 10_000;

/** Events waiting for the end of the event-loop turn, of one run. */
interface OutboxEntry {
  active: ActiveRun;
  entries: { seq: number; message: string }[];
  /** The run ended: its history is sealed after the last append. */
  sealed: boolean;
}

/** Delivers the events of the runs one replica executes (one per run service). */
export class Delivery {
  readonly #pubsub: PubSub;
  readonly #log: Logger;
  readonly #limits: AttachedLimits;
  readonly #outbox = new Map<string, OutboxEntry>();
  #flushTimer?: ReturnType<typeof setImmediate>;

  readonly #leaseMs: number | undefined;

  /**
   * Delivery through `pubsub`, with attached streams bounded by `limits`; with `leaseMs`, a run's
   * events are held back once its lease was last confirmed more than most of it ago.
   */
  constructor(pubsub: PubSub, log: Logger, limits: AttachedLimits, leaseMs?: number) {
    this.#pubsub = pubsub;
    this.#log = log;
    this.#limits = limits;
    this.#leaseMs = leaseMs;
  }

  /**
   * A new attached client's queue, bounded at `buffer` events and `max_unread_bytes` of their
   * JSON (each event is encoded once anyway, for pub/sub and the native stream).
   */
  attachedQueue(): AsyncQueue<SequencedEvent | EndNotice> {
    const maxBytes = this.#limits.max_unread_bytes;
    return new AsyncQueue<SequencedEvent | EndNotice>(
      this.#limits.buffer,
      maxBytes === undefined ? undefined : {
        maxBytes,
        sizeOf: (item) => "event" in item ? encodeEvent(item.event).length : 0,
      },
    );
  }

  /**
   * Publishes the event and hands it to the attached stream. Returns a promise only when that
   * stream is full: the run then waits for its client (backpressure), up to `drain_timeout`.
   */
  deliver(active: ActiveRun, event: RunEvent): Promise<void> | undefined {
    // Another attempt owns the run's stream now: nothing more of this one goes out.
    if (active.reason === "fenced") return undefined;
    // Numbered here, the one place every event of the run passes; and never earlier in time than
    // the event before it.
    if (event.timestamp < active.timestamp) event = { ...event, timestamp: active.timestamp };
    active.timestamp = event.timestamp;
    const item: SequencedEvent = { seq: ++active.seq, event };
    this.#publish(active, item);
    const queue = active.attached;
    if (!queue || queue.push(item)) return undefined;
    return this.#awaitRoom(active, queue, item);
  }

  /**
   * Appends what `#publish` queued to each run's history and publishes it on the run's channel
   * and, for a run continuing a chain, on the chain's (so one subscription follows every later
   * turn); a run that ended has its history sealed after.
   */
  flush(): Promise<void> {
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer);
    this.#flushTimer = undefined;
    const appends: Promise<void>[] = [];
    const held: [string, OutboxEntry][] = [];
    for (const [runId, box] of this.#outbox) {
      const { active, entries, sealed } = box;
      // A fenced attempt's last events stay unsaid (see `deliver`): its end waits for none.
      if (active.reason === "fenced") {
        active.recorded.resolve();
        continue;
      }
      // A replica that woke from a pause longer than its lease may have lost the run: its events
      // wait for the next heartbeat (`flush` again), so none is mixed into another attempt's.
      if (this.#inDoubt(active) && entries.length < HOLD_MAX) {
        held.push([runId, box]);
        continue;
      }
      const message = entries.length === 1
        ? entries[0].message
        : `[${entries.map((e) => e.message).join(",")}]`;
      const failed = (err: unknown) =>
        this.#log.warn("publish failed", { run_id: runId, error: String(err) });
      const channel = runChannel(runId);
      const appended = this.#pubsub.append(channel, entries, message).catch(failed);
      appends.push(appended);
      if (entries[0].seq === 1) void appended.then(() => active.recorded.resolve());
      if (sealed) void this.#pubsub.seal(channel);
      if (active.chain) this.#pubsub.publish(chainChannel(active.chain), message).catch(failed);
    }
    this.#outbox.clear();
    for (const [runId, box] of held) this.#outbox.set(runId, box);
    return Promise.all(appends).then(() => {});
  }

  /** Whether the run's lease was last confirmed more than most of a lease ago. */
  #inDoubt(active: ActiveRun): boolean {
    return this.#leaseMs !== undefined && performance.now() - active.leaseAt > this.#leaseMs * 0.8;
  }

  /**
   * The sequence number of the last event in a run's history (0 when none is kept): a resumed
   * attempt numbers its events after it, so the run keeps one numbering across attempts.
   */
  async lastSeq(runId: string): Promise<number> {
    try {
      const page = await this.#pubsub.history(runChannel(runId), Number.MAX_SAFE_INTEGER);
      return page?.last ?? 0;
    } catch {
      return 0;
    }
  }

  /**
   * Delivers the end of a run whose replica was lost and that has no attempt left: next in its history when the history is
   * kept (so resumed streams end with it), else live only, outside the sequence. Returns the
   * message it published.
   */
  async endLost(runId: string, event: RunEventOf<"run_finished">): Promise<string> {
    const channel = runChannel(runId);
    try {
      const page = await this.#pubsub.history(channel, Number.MAX_SAFE_INTEGER);
      if (page?.last) {
        const seq = page.last + 1;
        const message = JSON.stringify({ seq, event });
        await this.#pubsub.append(channel, [{ seq, message }], message);
        await this.#pubsub.seal(channel);
        return message;
      }
    } catch {
      // The history is unreachable: the live end below is all that can be done.
    }
    const message = JSON.stringify({ seq: null, event });
    await this.#pubsub.publish(channel, message).catch(() => {});
    return message;
  }

  /**
   * Waits for a slow attached client to make room. One that does not within `drain_timeout` is
   * dropped: its stream ends with the `slow_consumer` notice and the run goes on without it (the
   * client can re-attach); so a client that stops reading holds at most `buffer` events here.
   */
  async #awaitRoom(
    active: ActiveRun,
    queue: AsyncQueue<SequencedEvent | EndNotice>,
    event: SequencedEvent,
  ): Promise<void> {
    if (await queue.room(this.#limits.drain_timeout) && queue.push(event)) return;
    active.attached = undefined;
    queue.end({ notice: "slow_consumer" });
    this.#log.warn("attached client dropped: it read too slowly", {
      tenant: active.tenant,
      run_id: active.run_id,
      buffer: this.#limits.buffer,
      max_unread_bytes: this.#limits.max_unread_bytes,
      drain_timeout_ms: this.#limits.drain_timeout,
    });
  }

  /**
   * Queues an event for its run's channel. The events one turn of the event loop produces go out
   * as one message per run (a model that streams a burst of tokens costs one publish, not one per
   * token), in order, at the next turn; each is kept in the run's history first.
   */
  #publish(active: ActiveRun, item: SequencedEvent): void {
    // The event's JSON is shared with the native stream (`encodeEvent`): encoded once.
    const message = `{"seq":${item.seq},"event":${encodeEvent(item.event)}}`;
    const entry = { seq: item.seq!, message };
    let box = this.#outbox.get(active.run_id);
    if (box) box.entries.push(entry);
    else this.#outbox.set(active.run_id, box = { active, entries: [entry], sealed: false });
    if (item.event.kind === "run_finished") box.sealed = true;
    // setImmediate, not setTimeout(0): a timer set from a timer callback five deep (a paced model
    // stream) is clamped to 4 ms, which re-attached clients would see on every token.
    this.#flushTimer ??= setImmediate(() => void this.flush());
  }
}
