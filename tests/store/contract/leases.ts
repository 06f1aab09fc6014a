/** Leases: heartbeats and the sweep of runs whose owner stopped, once each. */
import assert from "node:assert/strict";
import type { LostRun } from "../../../src/store/mod.ts";
import { type Contract, ms, newTenant } from "./helpers.ts";

/** Registers the leases steps of the store contract. */
export async function leaseSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun } = c;

  await t.step("runs: heartbeat and sweepLostRuns", async () => {
    const tenant = newTenant();
    const lease = 60_000;
    const stale = await runningRun(tenant);
    const fresh = await runningRun(tenant);
    const finished = await runningRun(tenant);
    await store.finishRun(finished.run_id, { status: "completed" });
    clock.advance(10);
    await store.heartbeat("replica-b", [fresh.run_id, finished.run_id]);
    await store.heartbeat("replica-b", []);

    const mine = (lost: LostRun[]) => lost.filter((r) => r.tenant_id === tenant);
    // Nothing is older than the lease yet.
    assert.deepEqual(mine(await store.sweepLostRuns(clock.now(), lease)), []);

    // A cutoff between the stale run's creation and the fresh heartbeat.
    const cutoff = ms(stale.created_at) + 5;
    const lost = mine(await store.sweepLostRuns(cutoff + lease, lease));
    assert.deepEqual(lost, [{
      tenant_id: tenant,
      run_id: stale.run_id,
      session_id: stale.session_id,
      owner: "replica-a",
    }]);
    const swept = await store.getRun(tenant, stale.run_id);
    assert.equal(swept?.status, "interrupted");
    assert.deepEqual(swept?.error, {
      code: "replica_lost",
      message: "the replica executing this run stopped heartbeating (owner replica-a)",
    });
    assert.equal((await store.getRun(tenant, fresh.run_id))?.status, "running");
    assert.equal((await store.getRun(tenant, finished.run_id))?.status, "completed");
    // Swept once only.
    assert.deepEqual(mine(await store.sweepLostRuns(cutoff + lease, lease)), []);
    // A swept run is terminal: finishing it later changes nothing.
    assert.equal(
      (await store.finishRun(stale.run_id, { status: "completed" })).status,
      "interrupted",
    );

    // The heartbeat took ownership: the sweep names the new owner.
    const later = mine(await store.sweepLostRuns(clock.now() + lease + 1, lease));
    assert.deepEqual(later.map((r) => [r.run_id, r.owner]), [[fresh.run_id, "replica-b"]]);
  });

  await t.step("runs: two concurrent sweeps report each run once", async () => {
    const tenant = newTenant();
    const runs = await Promise.all([1, 2, 3, 4].map(() => runningRun(tenant)));
    const now = clock.now() + 120_000;
    const [a, b] = await Promise.all([
      store.sweepLostRuns(now, 1000),
      store.sweepLostRuns(now, 1000),
    ]);
    const reported = [...a, ...b].filter((r) => r.tenant_id === tenant).map((r) => r.run_id);
    assert.deepEqual(reported.sort(), runs.map((r) => r.run_id).sort());
    for (const run of runs) {
      assert.equal((await store.getRun(tenant, run.run_id))?.status, "interrupted");
    }
  });
}
