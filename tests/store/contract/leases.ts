/**
 * Leases: heartbeats per attempt, the claim of runs whose owner stopped (each once, as its next
 * attempt, or failed out of attempts), release, and fencing: a write of an attempt that no longer
 * owns its run lands nothing.
 */
import assert from "node:assert/strict";
import { newMessages, RunFenced, type StepCommit } from "../../../src/store/mod.ts";
import { type Contract, ms, newTenant, state, text } from "./helpers.ts";

/** Registers the leases steps of the store contract. */
export async function leaseSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun } = c;

  await t.step(
    "runs: heartbeat, then claimLostRuns takes stale runs as their next attempt",
    async () => {
      const tenant = newTenant();
      const lease = 60_000;
      const stale = await runningRun(tenant);
      const fresh = await runningRun(tenant);
      const finished = await runningRun(tenant);
      assert.equal(stale.attempt, 1);
      await store.finishRun(finished.run_id, { status: "completed" });
      clock.advance(10);
      assert.deepEqual(
        await store.heartbeat("replica-b", [
          { run_id: fresh.run_id, attempt: 1 },
          { run_id: finished.run_id, attempt: 1 },
        ]),
        [],
      );
      assert.deepEqual(await store.heartbeat("replica-b", []), []);

      const mine = <T extends { tenant_id: string }>(runs: T[]) =>
        runs.filter((r) => r.tenant_id === tenant);
      // Nothing is older than the lease yet.
      const none = await store.claimLostRuns("replica-c", clock.now(), lease, 3, 100);
      assert.deepEqual([mine(none.resumed), mine(none.failed)], [[], []]);

      // A cutoff between the stale run's creation and the fresh heartbeat.
      const cutoff = ms(stale.created_at) + 5;
      const claimed = await store.claimLostRuns("replica-c", cutoff + lease, lease, 3, 100);
      assert.deepEqual(mine(claimed.resumed), [{
        tenant_id: tenant,
        run_id: stale.run_id,
        session_id: stale.session_id,
        owner: "replica-a",
        attempt: 2,
        checkpoint_id: null,
        request: null,
      }]);
      assert.deepEqual(mine(claimed.failed), []);
      const taken = await store.getRun(tenant, stale.run_id);
      assert.equal(taken?.status, "running");
      assert.equal(taken?.attempt, 2);
      // Claimed once only: its heartbeat is fresh now.
      const again = await store.claimLostRuns("replica-d", cutoff + lease, lease, 3, 100);
      assert.deepEqual(mine(again.resumed), []);
      // The old attempt's heartbeat refreshes nothing and says so.
      assert.deepEqual(
        await store.heartbeat("replica-a", [{ run_id: stale.run_id, attempt: 1 }]),
        [stale.run_id],
      );

      // Out of attempts: failed, with the last owner in the error.
      const last = await store.claimLostRuns("replica-e", clock.now() + 10 * lease, lease, 2, 100);
      const failed = mine(last.failed).find((r) => r.run_id === stale.run_id);
      assert.deepEqual(failed, {
        tenant_id: tenant,
        run_id: stale.run_id,
        session_id: stale.session_id,
        owner: "replica-c",
      });
      const run = await store.getRun(tenant, stale.run_id);
      assert.equal(run?.status, "failed");
      assert.equal(run?.error?.code, "replica_lost");
      assert.match(run!.error!.message, /last owner replica-c\)$/);
      // The fresh one had one attempt: it is resumed.
      assert.deepEqual(mine(last.resumed).map((r) => [r.run_id, r.attempt]), [[fresh.run_id, 2]]);
      assert.equal((await store.getRun(tenant, finished.run_id))?.status, "completed");
    },
  );

  await t.step("runs: two concurrent claims take each run once", async () => {
    const tenant = newTenant();
    const runs = await Promise.all([1, 2, 3, 4].map(() => runningRun(tenant)));
    const now = clock.now() + 120_000;
    const [a, b] = await Promise.all([
      store.claimLostRuns("x", now, 1000, 3, 100),
      store.claimLostRuns("y", now, 1000, 3, 100),
    ]);
    const reported = [...a.resumed, ...b.resumed].filter((r) => r.tenant_id === tenant)
      .map((r) => r.run_id);
    assert.deepEqual(reported.sort(), runs.map((r) => r.run_id).sort());
    for (const run of runs) {
      assert.equal((await store.getRun(tenant, run.run_id))?.attempt, 2);
    }
  });

  await t.step("runs: a claim keeps the request and takes at most `limit`", async () => {
    const tenant = newTenant();
    const session_id = `s-${crypto.randomUUID().slice(0, 8)}`;
    const request = { model: { name: "x" }, messages: [] };
    const run = await store.createRun(tenant, {
      run_id: `r-${crypto.randomUUID().slice(0, 8)}`,
      session_id,
      parent_checkpoint_id: null,
      owner: "a",
      create_session: true,
      request,
    });
    const now = clock.now() + 120_000;
    const none = await store.claimLostRuns("b", now, 1000, 3, 0);
    assert.equal(none.resumed.length, 0);
    const { resumed } = await store.claimLostRuns("b", now, 1000, 3, 1_000);
    const mine = resumed.find((r) => r.run_id === run.run_id);
    assert.deepEqual(mine?.request, request);
    assert.equal(mine?.handed_over, undefined, "lost, not handed over");
  });

  await t.step("runs: a released run is claimed at once; release is fenced", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    assert.equal(await store.releaseRun(run.run_id, 2), false, "attempt 2 does not own it");
    assert.equal(await store.releaseRun(run.run_id, 1), true);
    // A lease of an hour has not passed, yet the released run is claimed.
    const { resumed } = await store.claimLostRuns("b", clock.now(), 3_600_000, 3, 1_000);
    assert.deepEqual(
      resumed.filter((r) => r.tenant_id === tenant)
        .map((r) => [r.run_id, r.attempt, r.handed_over]),
      [[run.run_id, 2, true]],
    );
  });

  await t.step("runs: a hand-over does not count toward maxAttempts", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    const mine = <T extends { tenant_id: string }>(runs: T[]) =>
      runs.filter((r) => r.tenant_id === tenant);
    // One attempt allowed: a released run is still resumed, twice over.
    for (const attempt of [1, 2]) {
      assert.equal(await store.releaseRun(run.run_id, attempt), true);
      const claimed = await store.claimLostRuns("b", clock.now(), 3_600_000, 1, 1_000);
      assert.deepEqual(mine(claimed.failed), []);
      assert.deepEqual(mine(claimed.resumed).map((r) => r.attempt), [attempt + 1]);
    }
    // Attempt 3 is lost with its replica: the one attempt that counts is spent.
    const lost = await store.claimLostRuns("c", clock.now() + 120_000, 1000, 1, 1_000);
    assert.deepEqual(mine(lost.resumed), []);
    assert.deepEqual(mine(lost.failed).map((r) => r.run_id), [run.run_id]);
    assert.equal((await store.getRun(tenant, run.run_id))?.status, "failed");
  });

  await t.step("runs: a run whose client went is cancelled only if none re-attached", async () => {
    const tenant = newTenant();
    const back = await runningRun(tenant);
    const gone = await runningRun(tenant);
    assert.equal(
      await store.cancelIfClientGone(back.run_id, 0),
      false,
      "not marked: never cancelled",
    );
    for (const run of [back, gone]) assert.equal(await store.clientGone(run.run_id), true);
    await store.clientReattached(back.run_id);
    assert.equal(await store.cancelIfClientGone(back.run_id, 0), false);
    assert.equal(await store.cancelIfClientGone(gone.run_id, 1_000), false, "within the grace");
    clock.advance(1_000);
    assert.equal(await store.cancelIfClientGone(gone.run_id, 1_000), true);
    assert.equal(await store.cancelIfClientGone(gone.run_id, 0), false, "once");
    assert.equal((await store.getRun(tenant, back.run_id))?.status, "running");
    assert.equal((await store.getRun(tenant, gone.run_id))?.status, "cancelled");
    assert.deepEqual(await store.runStatuses([gone.run_id]), new Map([[gone.run_id, "cancelled"]]));
    assert.equal(await store.clientGone(gone.run_id), false, "an ended run is not marked");
    // A client that came back before its drop was noticed: the late mark is refused.
    const early = await runningRun(tenant);
    await store.clientReattached(early.run_id);
    assert.equal(await store.clientGone(early.run_id), false);
    assert.equal(await store.cancelIfClientGone(early.run_id, 0), false);
    assert.equal((await store.getRun(tenant, early.run_id))?.status, "running");
  });

  await t.step("runs: a write of an attempt that lost its run lands nothing", async () => {
    const tenant = newTenant();
    const run = await runningRun(tenant);
    const step = (attempt: number): StepCommit => ({
      tenant_id: tenant,
      session_id: run.session_id,
      run_id: run.run_id,
      attempt,
      messages: [],
      checkpoint: {
        checkpoint_id: crypto.randomUUID(),
        parent_id: null,
        state: state(attempt),
      },
    });
    // Attempt 1 writes while it owns the run.
    const first = step(1);
    await store.commitStep(first);
    await store.claimLostRuns("b", clock.now() + 120_000, 1000, 3, 1_000);
    // Attempt 1 wakes up: its step, its message and its outcome are refused.
    const late = step(1);
    await assert.rejects(store.commitStep(late), RunFenced);
    const before = await store.allMessages(tenant, run.session_id);
    const zombie = newMessages(run.session_id, [text("zombie")], run.run_id, clock.now());
    await assert.rejects(
      store.commitStep({ ...late, messages: zombie, checkpoint: null }),
      RunFenced,
    );
    await assert.rejects(
      store.finishRun(run.run_id, { status: "completed", result: "zombie" }, null, 1),
      RunFenced,
    );
    assert.deepEqual(await store.allMessages(tenant, run.session_id), before);
    const after = await store.getRun(tenant, run.run_id);
    assert.equal(after?.status, "running");
    assert.equal(after?.checkpoint_id, first.checkpoint!.checkpoint_id);
    // Attempt 2 owns it: its writes land and its outcome is saved.
    const mine = step(2);
    await store.commitStep(mine);
    const done = await store.finishRun(run.run_id, { status: "completed" }, null, 2);
    assert.equal(done.status, "completed");
    assert.equal(done.attempt, 2);
    // A finished run takes no write of any attempt.
    const after2 = step(2);
    await assert.rejects(store.commitStep(after2), RunFenced);
  });
}
