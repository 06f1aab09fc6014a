/**
 * A run's writes at step boundaries: the messages it adds wait in memory until their step ends,
 * then go to the store with the step's checkpoint in one transaction (`Store.commitStep`); the
 * run's last step is kept back instead, for the run service to commit with the outcome. The
 * conversation is held to the session cap as it grows: a message that would take it past
 * `maxBytes` is not added (`SessionFull`).
 */
import type { Message, MessageInput } from "../api/schemas.ts";
import { type Clock, systemClock } from "../clock.ts";
import { newMessages, type StepCommit, type Store } from "../store/mod.ts";
import type { Context } from "./state.ts";
import type { PendingToolCall, RunIds } from "./types.ts";
import { jsonSize, SessionFull } from "./size.ts";
import { newId } from "../ids.ts";

/** The conversation of one run and what of it is not written yet. */
export class StepWriter {
  /** The conversation as the run sees it: as read at its start, then every message it added. */
  readonly conversation: Message[];
  /** Messages or context changed since the last checkpoint. */
  dirty = false;
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #ids: RunIds & { attempt?: number };
  /** The run's latest checkpoint, the parent of the next one. */
  #parent: string | null;
  /** Messages of the current step not committed yet. */
  #unsaved: Message[] = [];
  /** The last step's writes, committed with the outcome (see `takeLast`). */
  #last: StepCommit | null = null;
  /** Bytes of JSON of `conversation`, and the most it may reach. */
  #bytes: number;
  readonly #maxBytes: number;

  /**
   * Writes of the run `ids` into `store`, continuing `conversation` (of `size.bytes` bytes of
   * JSON, at most `size.max`) from checkpoint `parent`.
   */
  constructor(
    deps: { store: Store; clock?: Clock },
    ids: RunIds,
    parent: string | null,
    conversation: Message[],
    size: { bytes: number; max: number } = { bytes: 0, max: Infinity },
    attempt?: number,
  ) {
    this.#bytes = size.bytes;
    this.#maxBytes = size.max;
    this.#store = deps.store;
    this.#clock = deps.clock ?? systemClock;
    this.#ids = { tenant_id: ids.tenant_id, session_id: ids.session_id, run_id: ids.run_id };
    // Every write of the run carries its attempt, so the store refuses it after a takeover.
    if (attempt !== undefined) this.#ids.attempt = attempt;
    this.#parent = parent;
    this.conversation = conversation;
  }

  /**
   * Adds messages (tagged with this run) to the conversation; they are written with the step's
   * checkpoint, or by `commit`. Throws `SessionFull`, adding none, when they would take the
   * conversation past its cap.
   */
  add(inputs: MessageInput[]): Message[] {
    const now = this.#clock.now();
    const saved = newMessages(this.#ids.session_id, inputs, this.#ids.run_id, now);
    const bytes = saved.reduce((sum, m) => sum + jsonSize(m), this.#bytes);
    if (bytes > this.#maxBytes) throw new SessionFull(this.#maxBytes);
    this.#bytes = bytes;
    this.conversation.push(...saved);
    this.#unsaved.push(...saved);
    this.dirty = true;
    return saved;
  }

  /**
   * Ends a step: its messages and a checkpoint chained to the previous one, which becomes the
   * run's latest. A `last` step is kept for the outcome's transaction (`takeLast`).
   */
  async checkpoint(
    state: { context: Context; step: number },
    pending: PendingToolCall[],
    last: boolean,
  ): Promise<void> {
    const checkpoint_id = newId();
    await this.commit({
      checkpoint_id,
      parent_id: this.#parent,
      state: {
        context: state.context,
        pending_tool_calls: pending.map((p) => ({ ...p })),
        step: state.step,
      },
    }, last);
    this.#parent = checkpoint_id;
    this.dirty = false;
  }

  /** Writes the unsaved messages and `checkpoint` in one transaction (or keeps them as last). */
  async commit(checkpoint: StepCommit["checkpoint"], last = false): Promise<void> {
    // A step after the one kept as last (there is none today) must not overtake it.
    if (this.#last) {
      const earlier = this.#last;
      this.#last = null;
      await this.#store.commitStep(earlier);
    }
    const step: StepCommit = { ...this.#ids, messages: this.#unsaved, checkpoint };
    this.#unsaved = [];
    if (last) this.#last = step;
    else await this.#store.commitStep(step);
  }

  /**
   * Writes the step's messages so far without a checkpoint (a tool's result as soon as it is
   * known, so an attempt that resumes the run never runs that call again).
   */
  async save(): Promise<void> {
    if (this.#unsaved.length > 0) await this.commit(null);
  }

  /**
   * Takes messages the store already wrote into the conversation for the run (steering, see
   * `Store.takeSteering`): the run sees them from now on. The last step kept for the outcome is
   * written first (`flushLast`), so they follow it.
   */
  adopt(messages: Message[]): void {
    this.conversation.push(...messages);
    this.dirty = true;
  }

  /** Writes the step kept for the outcome now (the run goes on after all). */
  async flushLast(): Promise<void> {
    await this.save();
    const last = this.#last;
    this.#last = null;
    if (last) await this.#store.commitStep(last);
  }

  /**
   * After a failure that leaves no checkpoint: the messages the failed step completed become the
   * last step, without a checkpoint.
   */
  keepUnsavedAsLast(): void {
    if (this.#unsaved.length === 0) return;
    this.#last = { ...this.#ids, messages: this.#unsaved, checkpoint: null };
    this.#unsaved = [];
  }

  /** The last step's writes (null when there are none), handed over once. */
  takeLast(): StepCommit | null {
    const last = this.#last;
    this.#last = null;
    return last;
  }
}
