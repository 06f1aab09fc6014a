/**
 * A run's steering inbox: messages sent to a running run wait there, in order, until its attempt
 * takes them into the conversation (fenced); a run that ended gives back what it did not take;
 * a run that is not running takes none.
 */
import assert from "node:assert/strict";
import { newMessages, RunFenced } from "../../../src/store/mod.ts";
import { type Contract, newTenant, text } from "./helpers.ts";

/** Registers the steering steps of the store contract. */
export async function steeringSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun } = c;

  await t.step("steering: sent messages wait, in order, until the run takes them", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    const ids = { tenant_id: tenant, session_id: run.session_id, run_id: run.run_id };
    const [one] = newMessages(run.session_id, [text("one")], run.run_id, clock.now());
    const [two] = newMessages(run.session_id, [text("two")], run.run_id, clock.now());
    assert.equal(await store.steerRun(tenant, run.run_id, [one]), true);
    assert.equal(await store.steerRun(tenant, run.run_id, [two]), true);
    assert.equal(await store.steerRun(newTenant(), run.run_id, [two]), false, "another tenant's");
    // Nothing is in the conversation before the take; another attempt cannot take them.
    assert.deepEqual(await store.allMessages(tenant, run.session_id), []);
    await assert.rejects(() => store.takeSteering({ ...ids, attempt: 2 }), RunFenced);
    const taken = await store.takeSteering({ ...ids, attempt: 1 });
    assert.deepEqual(taken.map((m) => m.message_id), [one.message_id, two.message_id]);
    const stored = await store.allMessages(tenant, run.session_id);
    assert.deepEqual(stored.map((m) => [m.message_id, m.run_id]), [
      [one.message_id, run.run_id],
      [two.message_id, run.run_id],
    ]);
    assert.deepEqual(await store.takeSteering({ ...ids, attempt: 1 }), [], "taken once");
    // While it runs nothing comes back.
    assert.equal(await store.steerRun(tenant, run.run_id, [two]), true);
    assert.deepEqual(await store.reclaimSteering(run.run_id, [two.message_id]), []);
  });

  await t.step("steering: a run that ended gives back what it did not take", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    const [mine, theirs] = newMessages(
      run.session_id,
      [text("mine"), text("theirs")],
      run.run_id,
      clock.now(),
    );
    assert.equal(await store.steerRun(tenant, run.run_id, [mine, theirs]), true);
    await store.finishRun(run.run_id, { status: "completed", result: null });
    assert.equal(await store.steerRun(tenant, run.run_id, [mine]), false, "not running");
    const back = await store.reclaimSteering(run.run_id, [mine.message_id]);
    assert.deepEqual(back.map((m) => m.message_id), [mine.message_id]);
    assert.deepEqual(await store.reclaimSteering(run.run_id, [mine.message_id]), [], "once");
    const rest = await store.reclaimSteering(run.run_id, [theirs.message_id]);
    assert.deepEqual(rest.map((m) => m.message_id), [theirs.message_id]);
    assert.deepEqual(await store.allMessages(tenant, run.session_id), []);
  });
}
