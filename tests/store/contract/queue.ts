/**
 * The run queue: a queued run (attempt 0, `queued` to clients) holds its session, is never taken
 * as a lost run, and is claimed once, FIFO within a tenant and fair across tenants (the head of
 * the tenant executing fewest runs first); a cancelled one is never claimed. Runs queued behind
 * their session's running run (`queueBehind`) are claimed one at a time, in order, once it ended.
 */
import assert from "node:assert/strict";
import type { Run } from "../../../src/api/schemas.ts";
import { newMessages, RunFenced } from "../../../src/store/mod.ts";
import { type Contract, newTenant } from "./helpers.ts";

/** Registers the run queue steps of the store contract. */
export async function queueSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun } = c;
  const queued = async (tenant: string): Promise<Run> => {
    const run = await runningRun(tenant);
    assert.equal(await store.queueRun(run.run_id), true);
    clock.advance(1);
    return run;
  };
  const claimAll = async (owner: string, limit: number) =>
    (await store.claimQueuedRuns(owner, limit)).map((r) => r.run_id);

  await t.step("queue: a queued run is queued, holds its session, is no lost run", async () => {
    const tenant = newTenant();
    const run = await queued(tenant);
    const read = await store.getRun(tenant, run.run_id);
    assert.equal(read?.status, "queued");
    assert.equal(read?.attempt, 0);
    assert.equal(await store.queueDepth(), 1);
    // Listed by the status clients see.
    const listed = async (status: "queued" | "running") =>
      (await store.listRuns(tenant, run.session_id, { statuses: [status] }, { per_page: 10 }))
        .items.map((r) => r.run_id);
    assert.deepEqual(await listed("queued"), [run.run_id]);
    assert.deepEqual(await listed("running"), []);
    // Its session is busy: no other run starts on it.
    await assert.rejects(() => runningRun(tenant, run.session_id));
    // However old, the sweep of lost runs leaves it alone.
    const swept = await store.claimLostRuns("replica-x", clock.now() + 10 ** 9, 1, 3, 100);
    assert.ok(!swept.resumed.some((r) => r.run_id === run.run_id));
    assert.ok(!swept.failed.some((r) => r.run_id === run.run_id));
    const [claim, ...more] = await store.claimQueuedRuns("replica-b", 5);
    assert.deepEqual(more, []);
    assert.equal(claim.run_id, run.run_id);
    assert.equal(claim.owner, "replica-b");
    assert.equal(claim.attempt, 1);
    assert.equal(claim.created_at, Date.parse(run.created_at));
    const taken = await store.getRun(tenant, run.run_id);
    assert.deepEqual([taken?.status, taken?.attempt], ["running", 1]);
    assert.deepEqual(await listed("running"), [run.run_id]);
    assert.deepEqual(await listed("queued"), []);
    assert.equal(await store.queueDepth(), 0);
    await store.finishRun(run.run_id, { status: "completed" }, undefined, 1);
  });

  await t.step("queue: a tenant's running and queued runs are counted apart", async () => {
    const tenant = newTenant();
    assert.deepEqual(await store.tenantRunCounts(tenant), { running: 0, queued: 0 });
    const executing = await runningRun(tenant);
    const waiting = [await queued(tenant), await queued(tenant)];
    // Another tenant's runs are not counted.
    const other = await queued(newTenant());
    assert.deepEqual(await store.tenantRunCounts(tenant), { running: 1, queued: 2 });
    await store.finishRun(executing.run_id, { status: "completed" }, undefined, 1);
    assert.ok(await store.cancelRun(tenant, waiting[0].run_id));
    assert.deepEqual(await store.tenantRunCounts(tenant), { running: 0, queued: 1 });
    for (const run of [waiting[1], other]) {
      assert.ok(await store.cancelRun(run.tenant_id, run.run_id));
    }
    assert.deepEqual(await store.tenantRunCounts(tenant), { running: 0, queued: 0 });
  });

  await t.step("queue: a tenant executing tenantMaxRunning runs is passed over", async () => {
    const busy = newTenant();
    const executing = await runningRun(busy);
    const waiting = await queued(busy);
    const other = await queued(newTenant());
    // busy executes 1: at a cap of 1 only the other tenant's run is taken.
    assert.deepEqual((await store.claimQueuedRuns("replica-b", 5, 1)).map((r) => r.run_id), [
      other.run_id,
    ]);
    await store.finishRun(executing.run_id, { status: "completed" }, undefined, 1);
    assert.deepEqual((await store.claimQueuedRuns("replica-b", 5, 1)).map((r) => r.run_id), [
      waiting.run_id,
    ]);
    for (const run of [waiting, other]) {
      await store.finishRun(run.run_id, { status: "completed" }, undefined, 1);
    }
  });

  await t.step("queue: FIFO within a tenant, each run claimed once", async () => {
    const tenant = newTenant();
    const runs = [];
    for (let i = 0; i < 6; i++) runs.push((await queued(tenant)).run_id);
    assert.deepEqual(await claimAll("replica-b", 2), runs.slice(0, 2));
    // Concurrent claimers (separate connections on PostgreSQL) share the rest, none twice.
    const claims = await Promise.all([1, 2, 3, 4].map((i) => claimAll(`replica-${i}`, 2)));
    const all = claims.flat();
    assert.equal(all.length, 4);
    assert.deepEqual([...all].sort(), runs.slice(2).sort());
    assert.deepEqual(await claimAll("replica-b", 2), []);
    for (const id of runs) await store.finishRun(id, { status: "completed" });
  });

  await t.step("queue: a flooding tenant waits another's next run one slot at most", async () => {
    const flood = newTenant();
    const other = newTenant();
    const floodRuns = [];
    for (let i = 0; i < 5; i++) floodRuns.push((await queued(flood)).run_id);
    const late = (await queued(other)).run_id;
    // Both tenants execute nothing: the older head goes first.
    assert.deepEqual(await claimAll("replica-b", 1), [floodRuns[0]]);
    // The flooding tenant executes one run, the other none: the other's run is next.
    assert.deepEqual(await claimAll("replica-b", 1), [late]);
    assert.deepEqual(await claimAll("replica-b", 10), floodRuns.slice(1));
    for (const id of [...floodRuns, late]) await store.finishRun(id, { status: "completed" });
  });

  await t.step("queue: runs queued behind a session start one at a time, in order", async () => {
    const tenant = newTenant();
    const first = await runningRun(tenant);
    const sessionId = first.session_id;
    const behind = async (word: string) => {
      const run_id = crypto.randomUUID();
      const request = { messages: [{ role: "user", content: [{ type: "text", value: word }] }] };
      const run = await store.queueBehind(tenant, {
        run_id,
        session_id: sessionId,
        owner: "replica-a",
        request,
      });
      clock.advance(1);
      return run;
    };
    const [second, third] = [await behind("second"), await behind("third")];
    assert.deepEqual([second.status, second.attempt], ["queued", 0]);
    await assert.rejects(
      () =>
        store.queueBehind(tenant, {
          run_id: second.run_id,
          session_id: sessionId,
          owner: "replica-a",
          request: {},
        }),
      (e: Error & { kind?: string }) => e.kind === "run_exists",
    );
    // The running run still writes its steps: the runs behind it are not in its way.
    await c.commit(tenant, sessionId, first.run_id, { inputs: [{ role: "user", content: [] }] });
    assert.deepEqual(await claimAll("replica-b", 5), []);
    await store.finishRun(first.run_id, { status: "completed" }, undefined, 1);
    const [claim, ...more] = await store.claimQueuedRuns("replica-b", 5);
    assert.deepEqual(more, []);
    assert.deepEqual([claim.run_id, claim.attempt, claim.start_pending], [second.run_id, 1, true]);
    assert.equal(
      (claim.request as { messages: unknown[] }).messages.length,
      1,
      "its input is on its row",
    );
    // Claimed, its start not yet written: the next still waits.
    assert.deepEqual(await claimAll("replica-c", 5), []);
    const input = newMessages(sessionId, [{ role: "user", content: [] }], second.run_id, 1);
    await store.beginQueued({
      tenant_id: tenant,
      session_id: sessionId,
      run_id: second.run_id,
      attempt: 2,
      messages: input,
      checkpoint: null,
      parent_checkpoint_id: null,
      request: {},
    }).then(() => assert.fail("a stale attempt wrote"), (e) => assert.ok(e instanceof RunFenced));
    await store.beginQueued({
      tenant_id: tenant,
      session_id: sessionId,
      run_id: second.run_id,
      attempt: 1,
      messages: input,
      checkpoint: null,
      parent_checkpoint_id: null,
      request: {},
    });
    const messages = await store.allMessages(tenant, sessionId);
    assert.deepEqual(messages.at(-1)?.run_id, second.run_id);
    assert.deepEqual(await claimAll("replica-c", 5), []);
    await store.finishRun(second.run_id, { status: "completed" }, undefined, 1);
    assert.deepEqual(await claimAll("replica-c", 5), [third.run_id]);
    await store.finishRun(third.run_id, { status: "completed" }, undefined, 1);
  });

  await t.step("queue: a run queued behind a session keeps it busy for new runs", async () => {
    const tenant = newTenant();
    const first = await runningRun(tenant);
    const sessionId = first.session_id;
    const second = await store.queueBehind(tenant, {
      run_id: crypto.randomUUID(),
      session_id: sessionId,
      owner: "replica-a",
      request: { messages: [] },
    });
    await store.finishRun(first.run_id, { status: "completed" }, undefined, 1);
    // Waiting for a slot, then claimed with its start not yet written: the session's next run
    // either way, so a new run (`reject`) is refused and does not start ahead of it.
    for (const phase of ["queued", "claimed"]) {
      await assert.rejects(
        runningRun(tenant, sessionId),
        (e: Error & { kind?: string }) => e.kind === "session_busy",
        phase,
      );
      if (phase === "queued") assert.deepEqual(await claimAll("replica-b", 5), [second.run_id]);
    }
    // A used run id is still a conflict of its own.
    await assert.rejects(
      store.createRun(tenant, {
        run_id: second.run_id,
        session_id: sessionId,
        parent_checkpoint_id: null,
        owner: "replica-a",
      }),
      (e: Error & { kind?: string }) => e.kind === "run_exists",
    );
    await store.finishRun(second.run_id, { status: "completed" }, undefined, 1);
    await store.finishRun((await runningRun(tenant, sessionId)).run_id, { status: "completed" });
  });

  await t.step("queue: a cancelled queued run is never claimed", async () => {
    const tenant = newTenant();
    const run = await queued(tenant);
    const cancelled = await store.cancelRun(tenant, run.run_id);
    assert.equal(cancelled?.status, "cancelled");
    assert.deepEqual(await claimAll("replica-b", 5), []);
    assert.equal(await store.queueDepth(), 0);
    assert.equal(await store.queueRun(run.run_id), false);
  });
}
