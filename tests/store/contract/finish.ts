/**
 * How a run ends: `finishRun` (with its last step, a compare-and-set on running) and `cancelRun`.
 */
import assert from "node:assert/strict";
import { newMessages } from "../../../src/store/mod.ts";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newTenant, state, STORE, text } from "./helpers.ts";

/** Registers the run-ending steps of the store contract. */
export async function finishSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun } = c;

  await t.step("runs: finishRun commits the last step with the outcome", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant, "s");
    const messages = newMessages("s", [text("answer")], run.run_id, clock.now());
    const last = {
      tenant_id: tenant,
      session_id: "s",
      run_id: run.run_id,
      messages,
      checkpoint: { checkpoint_id: crypto.randomUUID(), parent_id: null, state: state(1) },
    };
    // A cancel that won the race keeps the status; the last step is written all the same.
    await store.cancelRun(tenant, run.run_id);
    const finished = await store.finishRun(run.run_id, { status: "completed" }, last);
    assert.equal(finished.status, "cancelled");
    assert.equal(finished.checkpoint_id, last.checkpoint.checkpoint_id);
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);

    // A last step that cannot be written (another run holds the session) writes nothing.
    const second = await runningRun(tenant, "s");
    const third = { ...last, messages: newMessages("s", [text("late")], run.run_id, 0) };
    await assertError(
      store.finishRun(run.run_id, { status: "failed" }, {
        ...third,
        checkpoint: { ...third.checkpoint, checkpoint_id: crypto.randomUUID() },
      }),
      409003,
      STORE,
    );
    assert.deepEqual(await store.allMessages(tenant, "s"), messages);
    assert.equal(
      (await store.finishRun(second.run_id, { status: "completed" })).status,
      "completed",
    );
  });

  await t.step("runs: finishRun is a compare-and-set on running", async () => {
    const tenant = newTenant();
    const results: unknown[] = ["plain text", null, 42, [1, "two"], { answer: { deep: true } }];
    for (const result of results) {
      const run = await runningRun(tenant);
      clock.advance(2);
      const done = await store.finishRun(run.run_id, { status: "completed", result });
      assert.equal(done.status, "completed");
      assert.deepEqual(done.result, result);
      assert.ok(ms(done.updated_at) > ms(run.updated_at));
      assert.deepEqual(await store.getRun(tenant, run.run_id), done);
      // Once terminal, a second finish changes nothing and returns the run as it is.
      const again = await store.finishRun(run.run_id, {
        status: "failed",
        error: { code: "x", message: "late" },
      });
      assert.deepEqual(again, done);
    }

    const interrupted = await runningRun(tenant);
    const paused = await store.finishRun(interrupted.run_id, {
      status: "interrupted",
      interrupt_payload: { question: "approve?" },
    });
    assert.deepEqual(paused.interrupt_payload, { question: "approve?" });
    assert.equal(paused.result, null);
    assert.equal(paused.error, null);

    const failing = await runningRun(tenant);
    const failed = await store.finishRun(failing.run_id, {
      status: "failed",
      error: { code: "model_error", message: "boom", provider: "p", model: "m", attempts: 3 },
    });
    assert.deepEqual(failed.error, {
      code: "model_error",
      message: "boom",
      provider: "p",
      model: "m",
      attempts: 3,
    });

    const cancelled = await runningRun(tenant);
    await store.cancelRun(tenant, cancelled.run_id);
    const late = await store.finishRun(cancelled.run_id, { status: "completed", result: "late" });
    assert.equal(late.status, "cancelled");
    assert.equal(late.result, null);

    await assertError(store.finishRun("no-such-run", { status: "completed" }), 404002, STORE);
  });

  await t.step("runs: cancelRun semantics and runStatuses", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    // Another tenant cannot see or cancel it.
    assert.equal(await store.cancelRun(newTenant(), run.run_id), null);
    assert.equal((await store.getRun(tenant, run.run_id))?.status, "running");
    assert.equal(await store.cancelRun(tenant, "no-such-run"), null);

    clock.advance(2);
    const cancelled = await store.cancelRun(tenant, run.run_id);
    assert.equal(cancelled?.status, "cancelled");
    assert.ok(ms(cancelled!.updated_at) > ms(run.updated_at));
    clock.advance(2);
    assert.deepEqual(await store.cancelRun(tenant, run.run_id), cancelled, "terminal: unchanged");

    const done = await runningRun(tenant);
    const completed = await store.finishRun(done.run_id, { status: "completed", result: 1 });
    assert.deepEqual(await store.cancelRun(tenant, done.run_id), completed);

    const live = await runningRun(tenant);
    const statuses = await store.runStatuses([run.run_id, done.run_id, live.run_id, "nope"]);
    assert.deepEqual(
      [...statuses.entries()].sort(),
      [[run.run_id, "cancelled"], [done.run_id, "completed"], [live.run_id, "running"]].sort(),
    );
    assert.equal((await store.runStatuses([])).size, 0);
    // Any tenant: the owner's watch does not know tenants.
    const elsewhere = await runningRun(newTenant());
    assert.equal((await store.runStatuses([elsewhere.run_id])).get(elsewhere.run_id), "running");
    const unsubscribe = await store.watchCancellations(() => {});
    await unsubscribe();
  });
}
