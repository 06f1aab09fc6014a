/**
 * What the steps of the store contract share: the store under test and its clock, fresh tenants
 * and ids, message inputs, timestamps checked as RFC 3339, and two fixtures (a running run, a
 * committed step).
 */
import assert from "node:assert/strict";
import type { Message, MessageInput, Run } from "../../../src/api/schemas.ts";
import { newMessages, type Store, StoreError } from "../../../src/store/mod.ts";
import type { TestClock } from "../../_kit/mod.ts";

/** A tenant no other step uses, so steps sharing one database stay independent. */
export function newTenant(): string {
  return `t_${crypto.randomUUID().slice(0, 8)}`;
}

/** A fresh id with a readable prefix. */
export function newId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 12)}`;
}

/** The store's errors are `StoreError`s, never HTTP errors; the edge answers them with a code. */
export const STORE = { thrown: StoreError };

/** A user message input with the text `value`. */
export function text(value: string, extra: Partial<MessageInput> = {}): MessageInput {
  return { role: "user", content: [{ type: "text", value }], ...extra };
}

/** The epoch milliseconds of a record's timestamp, which must be RFC 3339 (`toISOString`). */
export function ms(iso: string): number {
  const value = Date.parse(iso);
  assert.ok(!Number.isNaN(value), `not a timestamp: ${iso}`);
  assert.equal(new Date(value).toISOString(), iso, "timestamps are RFC 3339 (toISOString)");
  return value;
}

/** The state a checkpoint of step `step` saves. */
export const state = (step: number) => ({
  context: { step },
  pending_tool_calls: [],
  step,
});

/** The store under test, its clock, and the fixtures the steps build on. */
export interface Contract {
  /** A migrated store. */
  store: Store;
  /** The store's clock; steps move it on where they need a later timestamp. */
  clock: TestClock;
  /** A session with one running run, for steps that need one. */
  runningRun(tenant: string, sessionId?: string): Promise<Run>;
  /**
   * Commits a step of a run: its messages (records made from `inputs`, tagged with the run) and
   * a checkpoint after them. Returns the checkpoint id and the records.
   */
  commit(
    tenant: string,
    sessionId: string,
    runId: string,
    options?: { inputs?: MessageInput[]; parent?: string | null; step?: number },
  ): Promise<{ checkpoint_id: string; messages: Message[] }>;
}

/** The contract's fixtures on `store` and `clock`. */
export function contract(store: Store, clock: TestClock): Contract {
  return {
    store,
    clock,
    async runningRun(tenant, sessionId = newId("s")) {
      return await store.createRun(tenant, {
        run_id: newId("r"),
        session_id: sessionId,
        parent_checkpoint_id: null,
        owner: "replica-a",
        create_session: true,
      });
    },
    async commit(tenant, sessionId, runId, options = {}) {
      const checkpoint_id = crypto.randomUUID();
      const messages = newMessages(sessionId, options.inputs ?? [], runId, clock.now());
      await store.commitStep({
        tenant_id: tenant,
        session_id: sessionId,
        run_id: runId,
        messages,
        checkpoint: {
          checkpoint_id,
          parent_id: options.parent ?? null,
          state: state(options.step ?? 0),
        },
      });
      return { checkpoint_id, messages };
    },
  };
}

/**
 * The tables whose rows accumulate with sessions and runs: no statement of a store may read one
 * in full (the query plan tests of both stores).
 */
export const GROWING_TABLES: readonly string[] = [
  "runs",
  "sessions",
  "messages",
  "checkpoints",
  "run_steps",
  "run_links",
];
