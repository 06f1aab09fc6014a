/**
 * Double texting: what a start does when its session already has a run going, as its
 * `multitask_strategy` says (docs/api.md, Double texting). `reject` is the start's own 409;
 * `enqueue` is the store's (a run queued behind its session's runs, starts.ts); `interrupt` and
 * `rollback` make way for the new run here (`makeWay`): cancel the current run, wait for its
 * end, and remove its messages (`rollback`).
 * The current run may be on any replica: its end is heard on its event stream (pub/sub and
 * history), its cancellation travels through the store. Starts of one session that wait on this
 * replica go one at a time, in the order they came (`inTurn`).
 */
import type { MultitaskStrategy, Run } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import { StoreError } from "../store/mod.ts";
import { RunServiceError } from "./errors.ts";
import type { AttachOptions, RunStream } from "./stream.ts";

/** What double texting needs of the run service. */
export interface MultitaskDeps {
  store: Pick<Store, "allMessages" | "deleteMessage">;
  log: Logger;
  /** Opens a stream of the run's events (see `RunService.attach`). */
  attach: (tenant: string, runId: string, options: AttachOptions) => Promise<RunStream>;
  /** The sequence number of the run's last event delivered so far. */
  lastSeq: (runId: string) => Promise<number>;
  /** Cancels the run through the store (its owner, on any replica, hears of it). */
  cancel: (tenant: string, runId: string) => Promise<void>;
  /** How long to wait before asking again when a run's end cannot be heard. */
  pollInterval: number;
}

/** Whether `err` is a start refused because the session has a run going. */
export function sessionBusy(err: unknown): boolean {
  return (err instanceof StoreError || err instanceof RunServiceError) &&
    err.kind === "session_busy";
}

/** The strategies that make way for the new run before it starts. */
export type WayStrategy = Exclude<MultitaskStrategy, "reject" | "steer" | "enqueue">;

/** Double texting on this replica: its waiting starts, by session. */
export class Multitask {
  /** The tail of each session's line of starts waiting here. */
  readonly #lines = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: MultitaskDeps) {}

  /**
   * Runs `start` after the starts of the session that came before it on this replica are done
   * (started or refused), so they start in the order they came.
   */
  async inTurn<T>(tenant: string, sessionId: string, start: () => Promise<T>): Promise<T> {
    const key = `${tenant}\n${sessionId}`;
    const before = this.#lines.get(key) ?? Promise.resolve();
    const mine = before.catch(() => {}).then(start);
    this.#lines.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.#lines.get(key) === mine) this.#lines.delete(key);
    }
  }

  /**
   * Makes way for a new run of `current`'s session: cancels `current` and waits until it has
   * ended (its outcome saved, so nothing of it is written after the new run starts); `rollback`
   * then removes its messages from the conversation.
   */
  async makeWay(tenant: string, current: Run, strategy: WayStrategy): Promise<void> {
    const { attach, lastSeq, cancel, log, pollInterval } = this.deps;
    const runId = current.run_id;
    // Opened before the cancel: its end (`run_finished`) cannot slip past the stream.
    const stream = await lastSeq(runId).then((after) => attach(tenant, runId, { after }))
      .catch(() => null);
    log.info("run cancelled for a new one", { tenant, run_id: runId, strategy });
    await cancel(tenant, runId);
    if (stream) {
      for await (const _ of stream) { /* until the run's end */ }
    } else {
      // Its events are not heard (ended meanwhile, or its history is gone): the caller asks the
      // store again after a while.
      await new Promise((resolve) => setTimeout(resolve, pollInterval));
    }
    if (strategy === "rollback") await this.#removeMessages(tenant, current);
  }

  /** Removes the messages `run` added (its input too) from its session's conversation. */
  async #removeMessages(tenant: string, run: Run): Promise<void> {
    const { store, log } = this.deps;
    const messages = await store.allMessages(tenant, run.session_id);
    const ids = messages.filter((m) => m.run_id === run.run_id).map((m) => m.message_id);
    for (const id of ids) await store.deleteMessage(tenant, run.session_id, id);
    log.info("run rolled back", { tenant, run_id: run.run_id, messages: ids.length });
  }
}
