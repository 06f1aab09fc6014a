/**
 * Double texting: what a start does when its session already has a run going, as its
 * `multitask_strategy` says (docs/api.md, Double texting). `reject` is the start's own 409;
 * `enqueue` is the store's (a run queued behind its session's runs, starts.ts); `interrupt` and
 * `rollback` make way for the new run here (`makeWay`): cancel the current run and the runs queued
 * behind it, wait for their ends, and remove their messages (`rollback`).
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
  store: Pick<Store, "allMessages" | "deleteMessage" | "listRuns">;
  log: Logger;
  /** Opens a stream of the run's events (see `RunService.attach`). */
  attach: (tenant: string, runId: string, options: AttachOptions) => Promise<RunStream>;
  /** The sequence number of the run's last event delivered so far. */
  lastSeq: (runId: string) => Promise<number>;
  /**
   * Cancels the run through the store (its owner, on any replica, hears of it); resolves to the
   * run after the cancel.
   */
  cancel: (tenant: string, runId: string) => Promise<Run>;
  /** How long to wait before asking again when a run's end cannot be heard. */
  pollInterval: number;
}

/** How many queued runs one `makeWay` cancels at most (the start makes way again for more). */
const QUEUED_BATCH = 100;

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
   * Makes way for a new run of `current`'s session: cancels `current` and the runs queued behind
   * it and waits until they have ended (their outcomes saved, so nothing of them is written after
   * the new run starts); `rollback` then removes their messages from the conversation. The queued
   * runs are cancelled first, all at once: when `current` ends, the run queue finds none of them
   * to start; one cancelled before any replica took it has ended there and then. The runs still
   * going are waited for together.
   */
  async makeWay(tenant: string, current: Run, strategy: WayStrategy): Promise<void> {
    const { store } = this.deps;
    const page = await store.listRuns(tenant, current.session_id, { statuses: ["queued"] }, {
      per_page: QUEUED_BATCH,
    });
    const behind = page.items.filter((r) => r.run_id !== current.run_id);
    const queued = current.status === "queued" ? [current, ...behind] : behind;
    const taken = await Promise.all(queued.map(async (run) => {
      const after = await this.#cancel(tenant, run, strategy);
      // A replica took it meanwhile: it runs until it hears of the cancel, like `current`.
      return after.attempt === 0 ? [] : [run];
    }));
    await Promise.all([
      ...(current.status === "queued" ? [] : [this.#cancelAndWait(tenant, current, strategy)]),
      ...taken.flat().map((run) => this.#waitForEnd(tenant, run, 0)),
    ]);
    if (strategy === "rollback") await this.#removeMessages(tenant, [current, ...behind]);
  }

  /** Cancels a running run and waits for its end. */
  async #cancelAndWait(tenant: string, run: Run, strategy: WayStrategy): Promise<void> {
    const { attach, lastSeq } = this.deps;
    // Opened before the cancel: its end (`run_finished`) cannot slip past the stream.
    const stream = await lastSeq(run.run_id).then((after) => attach(tenant, run.run_id, { after }))
      .catch(() => null);
    await this.#cancel(tenant, run, strategy);
    await this.#drain(stream);
  }

  /** Waits for the end of a run cancelled already, from its events after `after`. */
  async #waitForEnd(tenant: string, run: Run, after: number): Promise<void> {
    const stream = await this.deps.attach(tenant, run.run_id, { after }).catch(() => null);
    await this.#drain(stream);
  }

  /** Reads `stream` to the run's end; without one, waits a poll interval. */
  async #drain(stream: RunStream | null): Promise<void> {
    if (stream) {
      for await (const _ of stream) { /* until the run's end */ }
    } else {
      // Its events are not heard (ended meanwhile, or its history is gone): the caller asks the
      // store again after a while.
      await new Promise((resolve) => setTimeout(resolve, this.deps.pollInterval));
    }
  }

  #cancel(tenant: string, run: Run, strategy: WayStrategy): Promise<Run> {
    this.deps.log.info("run cancelled for a new one", { tenant, run_id: run.run_id, strategy });
    return this.deps.cancel(tenant, run.run_id);
  }

  /** Removes the messages `runs` added (their input too) from their session's conversation. */
  async #removeMessages(tenant: string, runs: Run[]): Promise<void> {
    const { store, log } = this.deps;
    const sessionId = runs[0].session_id;
    const messages = await store.allMessages(tenant, sessionId);
    for (const run of runs) {
      const ids = messages.filter((m) => m.run_id === run.run_id).map((m) => m.message_id);
      for (const id of ids) await store.deleteMessage(tenant, sessionId, id);
      log.info("run rolled back", { tenant, run_id: run.run_id, messages: ids.length });
    }
  }
}
