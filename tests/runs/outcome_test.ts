/**
 * A run's outcome (runs/outcome.ts): what the engine's `run_finished` or the service's abort
 * makes of it, and how it is saved with the last step — waiting out an unavailable store until
 * shutdown gives up, and ending `failed` without the last step when the store refuses that step.
 */
import assert from "node:assert/strict";
import { makeEvent, type RunEventOf } from "../../src/api/events.ts";
import { createLogger } from "../../src/log.ts";
import type { ActiveRun } from "../../src/runs/active.ts";
import { activeRun } from "./active_run.ts";
import { outcomeOf, saveOutcome } from "../../src/runs/outcome.ts";
import { newMessages, type Store, StoreUnavailable } from "../../src/store/mod.ts";
import { openTestStore } from "../_kit/mod.ts";

const finished = (
  status: RunEventOf<"run_finished">["status"],
  more: Partial<RunEventOf<"run_finished">> = {},
) =>
  makeEvent("run_finished", {
    session_id: "s1",
    run_id: "r1",
    status,
    interrupt_payload: null,
    result: null,
    error: null,
    ...more,
  });

Deno.test("outcomeOf: the engine's end, a shutdown, a missing or bad end", () => {
  const result = { text: "hi", context: null };
  assert.deepEqual(outcomeOf(undefined, finished("completed", { result })), {
    status: "completed",
    result,
    interrupt_payload: null,
    error: null,
  });
  assert.deepEqual(outcomeOf("cancelled", finished("cancelled")).status, "cancelled");
  assert.deepEqual(outcomeOf(undefined, undefined), {
    status: "failed",
    error: { code: "internal_error", message: "the run ended unexpectedly" },
  });
  assert.equal(outcomeOf(undefined, finished("running")).error?.message, "bad final status");
});

/** A run record in `store` and the service's view of it. */
async function startedRun(store: Store): Promise<ActiveRun> {
  const run_id = crypto.randomUUID();
  await store.createRun("t1", {
    run_id,
    session_id: "s1",
    parent_checkpoint_id: null,
    owner: "test",
    create_session: true,
  });
  return activeRun({ run_id });
}

/** `store` with `finishRun` failing `failures` times with `error` first. */
function failing(store: Store, failures: number, error: () => Error): Store {
  let left = failures;
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "finishRun") return typeof value === "function" ? value.bind(target) : value;
      return (...args: Parameters<Store["finishRun"]>) => {
        if (left-- > 0) return Promise.reject(error());
        return target.finishRun(...args);
      };
    },
  });
}

Deno.test("saveOutcome: waits out an unavailable store, with the last step", async () => {
  await using fx = await openTestStore("sqlite", { memory: true });
  const logs: string[] = [];
  const log = createLogger("debug", {}, (line) => logs.push(line));
  const active = await startedRun(fx.store);
  const [message] = newMessages(
    "s1",
    [{
      role: "assistant",
      content: [{ type: "text", value: "done" }],
    }],
    active.run_id,
    Date.now(),
  );
  active.last = {
    tenant_id: "t1",
    session_id: "s1",
    run_id: active.run_id,
    messages: [message],
    checkpoint: null,
  };
  const store = failing(fx.store, 2, () => new StoreUnavailable("finishRun", "down"));
  const run = await saveOutcome({ store, log, givingUp: () => false }, active, {
    status: "completed",
    result: { text: "done", context: null },
  });
  assert.equal(run.status, "completed");
  assert.equal(active.last, null);
  assert.deepEqual((await fx.store.allMessages("t1", "s1")).map((m) => m.message_id), [
    message.message_id,
  ]);
  assert.equal(logs.filter((l) => l.includes("store unavailable")).length, 1, "warned once");

  // Once shutdown gives up, the outage is the caller's.
  const next = await startedRun(fx.store);
  const down = failing(fx.store, 1, () => new StoreUnavailable("finishRun", "down"));
  await assert.rejects(
    saveOutcome({ store: down, log, givingUp: () => true }, next, { status: "completed" }),
    StoreUnavailable,
  );
});

Deno.test("saveOutcome: a last step the store refuses ends the run failed, without it", async () => {
  await using fx = await openTestStore("sqlite", { memory: true });
  const logs: string[] = [];
  const log = createLogger("debug", {}, (line) => logs.push(line));
  const active = await startedRun(fx.store);
  active.last = {
    tenant_id: "t1",
    session_id: "s1",
    run_id: active.run_id,
    messages: [],
    checkpoint: null,
  };
  const store = failing(fx.store, 1, () => new Error("constraint"));
  const run = await saveOutcome({ store, log, givingUp: () => false }, active, {
    status: "completed",
  });
  assert.equal(run.status, "failed");
  assert.deepEqual(run.error, {
    code: "internal_error",
    message: "the run's last step could not be saved",
  });
  assert.ok(logs.some((l) => l.includes("could not save the last step of the run")));
});
