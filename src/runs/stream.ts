/**
 * Re-attach streams: a run's events for an observer that is not the one that started it, live
 * through pub/sub and, from a client's cursor, replayed from the run's retained history first.
 *
 * The owner of a run appends each event to the history before it publishes it; an observer
 * subscribes before it reads the history. So an event published before the subscription is in
 * the history read, and one published after it arrives live: the stream has no gap, and
 * duplicates are dropped by sequence number.
 *
 * A stream also ends when it cannot hear its run: when no event came for a while it asks the
 * store, and once the run has ended without its `run_finished` arriving (a `memory` pub/sub in
 * another process), it ends with the retained rest of the run or the end read from the store.
 */
import type { Run } from "../api/schemas.ts";
import { makeEvent, type RunStreamItem, type SequencedEvent } from "../api/events.ts";
import type { HistoryPage, PubSub, Retained, Subscription } from "../pubsub/mod.ts";
import type { Store } from "../store/mod.ts";
import { runServiceErrors } from "./errors.ts";
import { finishedOf } from "./outcome.ts";
import type { ReplayBudget } from "./replay_budget.ts";
import {
  type Decoded,
  decodeRetained,
  decodeRunMessage,
  PRIME_CHARS,
  runChannel,
} from "./channel.ts";

/** What re-attach streams need from the run service. */
export interface StreamDeps {
  store: Pick<Store, "getRun">;
  pubsub: PubSub;
  /** Milliseconds without an event after which a live stream asks whether its run ended. */
  watchMs: number;
  /** What resumed streams replay at once. */
  replay: ReplayBudget;
  /**
   * Whether the history of `run`, which has not ended, is readable here once written: retention
   * is on, and the run has not started (queued), or its history is shared by the replicas (not
   * the `memory` pub/sub), or this process executes it. No history of it then means none is
   * written yet: the run's first event is still to come, not gone.
   */
  historyHere(run: Run): boolean;
}

/** Where a re-attach stream starts. */
export interface AttachOptions {
  /**
   * A client's cursor: deliver every event after this sequence number, then live ones. Without
   * it, only events from now on (the spec's re-attach).
   */
  after?: number;
  /**
   * With `after`: start at the run's first event instead, so an encoder that keeps state (the
   * AG-UI and A2A ones) can rebuild it; the items up to `after` are what the client already has.
   * A history trimmed at the front (a run longer than `retention_max_events`) is then
   * `events_gone`.
   */
  fromFirst?: boolean;
  /**
   * Without `after`: the run has not started yet (queued), so its live events are taken from its
   * first on, any the subscription missed (it started before the subscription) filled from its
   * history.
   */
  unstarted?: boolean;
}

/** A run's event stream for an observer. */
export interface RunStream extends AsyncIterable<RunStreamItem> {
  /** The run as it was when the stream opened. */
  readonly run: Run;
  /** False when the run had ended: the stream replays what is retained and ends, never waits. */
  readonly live: boolean;
}

/**
 * Opens a re-attach stream of a run of the tenant (`run_not_found` when absent). Without a cursor
 * the run must be running (`run_not_running`, the spec); with one, the history must reach back to
 * it (`events_gone` otherwise).
 */
export async function openRunStream(
  deps: StreamDeps,
  tenant: string,
  runId: string,
  options: AttachOptions = {},
): Promise<RunStream> {
  const before = await deps.store.getRun(tenant, runId);
  if (!before) throw runServiceErrors.runNotFound(runId);
  const { after } = options;
  if (after === undefined) {
    return await liveStream(deps, tenant, before, options.unstarted ? 0 : null);
  }
  const channel = runChannel(runId);
  // Subscribed before the history is read: see the module comment.
  const sub = unended(before.status) ? await deps.pubsub.subscribe(channel) : null;
  let release = () => {};
  try {
    const page = await deps.pubsub.history(channel, options.fromFirst ? 0 : after) ??
      (sub && deps.historyHere(before) ? NOTHING_YET : null);
    // Room for the large messages it replays, beside other streams', before decoding them.
    release = await deps.replay.holdLarge(channel, page?.entries, PRIME_CHARS);
    // The decoded large messages this stream replays, kept until it has (see decodeRetained).
    let keep: Decoded[] | null = [];
    const entries = checkedEntries(
      runId,
      page,
      options.fromFirst ? 0 : after,
      unended(before.status),
      (entry) => decodeRetained(channel, entry, keep!),
    );
    const ended = entries.some((e) => e.event.kind === "run_finished");
    if (ended) sub?.close();
    // Nothing kept yet: a stream that starts at the first event takes the live ones from it on.
    const last = entries.at(-1)?.seq ?? (options.fromFirst ? 0 : after);
    const ctx = { deps, tenant, run: before };
    return deps.replay.releaseWhenCollected<RunStream>({
      run: before,
      live: sub !== null && !ended,
      async *[Symbol.asyncIterator]() {
        try {
          yield* entries;
          keep = null;
          release();
          if (ended) return;
          if (sub) yield* liveItems(ctx, sub, last);
          else yield* ending(ctx, last);
        } finally {
          keep = null;
          release();
          sub?.close();
        }
      },
    }, release);
  } catch (err) {
    release();
    sub?.close();
    throw err;
  }
}

/** The history of a run whose first event is still to come (see `StreamDeps.historyHere`). */
const NOTHING_YET: HistoryPage = { entries: [], first: null, last: null };

/**
 * The stream of an attached run that waits in the run queue: `run_queued` (live only, no sequence
 * number), then the run's events from `stream` (opened before the run was queued, so whichever
 * replica takes it, none is missed).
 */
export async function* queuedEvents(
  run: { session_id: string; run_id: string },
  queueDepth: number | null,
  stream: RunStream,
): AsyncGenerator<RunStreamItem> {
  const { session_id, run_id } = run;
  yield {
    seq: null,
    event: makeEvent("run_queued", { session_id, run_id, queue_depth: queueDepth }),
  };
  yield* stream;
}

/**
 * The spec's re-attach: live events from now on, of a running run (`run_not_running` else); after
 * `last` when given (see `AttachOptions.unstarted`).
 */
async function liveStream(
  deps: StreamDeps,
  tenant: string,
  before: Run,
  last: number | null,
): Promise<RunStream> {
  if (!unended(before.status)) {
    throw runServiceErrors.runNotRunning(before.run_id, before.status);
  }
  const sub = await deps.pubsub.subscribe(runChannel(before.run_id));
  // Read again once subscribed: a run that finished meanwhile is refused, never a stream that
  // waits for an end that was already published.
  const now = await deps.store.getRun(tenant, before.run_id).catch((err) => {
    sub.close();
    throw err;
  });
  if (!now || !unended(now.status)) {
    sub.close();
    throw runServiceErrors.runNotRunning(before.run_id, now?.status ?? "gone");
  }
  const ctx = { deps, tenant, run: now };
  return {
    run: now,
    live: true,
    async *[Symbol.asyncIterator]() {
      try {
        yield* liveItems(ctx, sub, last);
      } finally {
        sub.close();
      }
    },
  };
}

/**
 * The retained events after the cursor (or from the oldest, for `fromFirst`), checked: a history
 * that is missing here, or no longer reaches back to the cursor, or has a hole, is `events_gone`.
 */
function checkedEntries(
  runId: string,
  page: HistoryPage | null,
  after: number,
  running: boolean,
  decode: (entry: Retained) => SequencedEvent[],
): SequencedEvent[] {
  if (!page) {
    throw runServiceErrors.eventsGone(
      runId,
      running
        ? "this replica keeps no history of the run: its pub/sub is in-process memory, or " +
          "retention is off"
        : "the run ended longer ago than the retention window, or retention is off",
    );
  }
  if (page.first !== null && page.first > after + 1) {
    throw runServiceErrors.eventsGone(runId, `the oldest event kept is number ${page.first}`);
  }
  const entries = page.entries.flatMap(decode);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i].seq !== entries[i - 1].seq! + 1) {
      throw runServiceErrors.eventsGone(runId, `event ${entries[i - 1].seq! + 1} is missing`);
    }
  }
  return entries;
}

interface StreamContext {
  deps: StreamDeps;
  tenant: string;
  run: Run;
}

/**
 * Live events from a subscription, after sequence number `last` (null: from the first that
 * arrives). Duplicates are dropped; a hole (a message the transport lost) is filled from the
 * history, or ends the stream with `transport_lost` when it cannot be.
 */
async function* liveItems(
  ctx: StreamContext,
  sub: Subscription,
  last: number | null,
): AsyncGenerator<RunStreamItem> {
  const iterator = sub[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<string>> | undefined;
  let heard = false;
  let endSeen = false;
  for (;;) {
    pending ??= iterator.next();
    const result = await orTimeout(pending, ctx.deps.watchMs);
    if (result === undefined) {
      // Quiet for a while: did the run end without us hearing it?
      if (heard) {
        heard = false;
        continue;
      }
      const run = await ctx.deps.store.getRun(ctx.tenant, ctx.run.run_id).catch(() => undefined);
      if (run === undefined || (run !== null && unended(run.status))) continue;
      // One more interval for a `run_finished` still on its way.
      if (!endSeen) {
        endSeen = true;
        continue;
      }
      yield* ending({ ...ctx, run: run ?? ctx.run }, last);
      return;
    }
    pending = undefined;
    if (result.done) {
      const why = await sub.ended;
      yield { notice: why === "overflow" ? "subscriber_overflow" : "transport_lost" };
      return;
    }
    heard = true;
    for (const item of decodeRunMessage(result.value)) {
      const finished = item.event.kind === "run_finished";
      if (item.seq !== null && last !== null) {
        if (item.seq <= last) {
          // Already delivered; a cursor ahead of the run still ends with the run.
          if (finished) return;
          continue;
        }
        if (item.seq > last + 1) {
          const filled = await fill(ctx, last, item.seq);
          if (!filled) {
            yield { notice: "transport_lost" };
            return;
          }
          yield* filled;
        }
      }
      yield item;
      if (item.seq !== null) last = item.seq;
      if (finished) return;
    }
  }
}

/** The retained events strictly between `last` and `next`, or null when some are not kept. */
async function fill(
  ctx: StreamContext,
  last: number,
  next: number,
): Promise<SequencedEvent[] | null> {
  const page = await ctx.deps.pubsub.history(runChannel(ctx.run.run_id), last).catch(() => null);
  const missing = (page?.entries ?? []).flatMap((e) => decodeRunMessage(e.message))
    .filter((e) => e.seq! < next);
  return missing.length === next - last - 1 ? missing : null;
}

/**
 * The end of a stream whose run ended without its `run_finished` reaching the stream: the rest
 * of the run from the history when it is kept here (asked twice, as the owner appends the end
 * just after it writes the outcome), else the end as the store has it.
 */
async function* ending(ctx: StreamContext, last: number | null): AsyncGenerator<SequencedEvent> {
  const channel = runChannel(ctx.run.run_id);
  // A stream that never heard the run (`last` null) was promised live events only: no replay.
  for (let attempt = 0; last !== null && attempt < 2; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, ctx.deps.watchMs));
    const page = await ctx.deps.pubsub.history(channel, last).catch(() => null);
    const rest = (page?.entries ?? []).flatMap((e) => decodeRunMessage(e.message));
    if (rest.length === 0 || rest[0].seq !== last + 1) continue;
    const end = rest.findIndex((e) => e.event.kind === "run_finished");
    if (end >= 0) {
      yield* rest.slice(0, end + 1);
      return;
    }
    // The owner died before it could write its end: what it wrote, then the store's end.
    if (attempt === 1) yield* rest;
  }
  const run = await ctx.deps.store.getRun(ctx.tenant, ctx.run.run_id).catch(() => null) ??
    ctx.run;
  yield { seq: null, event: finishedFrom(run) };
}

/** The `run_finished` event of a run record that has ended, stamped with its end time. */
function finishedFrom(run: Run): SequencedEvent["event"] {
  const event = finishedOf(run);
  const ended = Date.parse(run.updated_at);
  return Number.isFinite(ended) ? { ...event, timestamp: ended / 1000 } : event;
}

/** `promise`'s result, or undefined when it takes longer than `ms`. */
async function orTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a run of `status` has not ended yet: running, or queued for a free slot. */
function unended(status: string): boolean {
  return status === "running" || status === "queued";
}
