/**
 * Leases (runs/leases.ts) on a real SQLite store: this replica's heartbeats keep its runs while a
 * run whose replica stopped heartbeating is claimed as its next attempt — or, out of attempts,
 * recorded `failed` (`replica_lost`) and its end delivered to its stream and to the followers of
 * the chain it continued — a run another attempt took over is reported fenced, and a
 * cancellation recorded in the store reaches the run that executes here. Two real replicas and a
 * killed one are in replicas_test.ts.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../src/log.ts";
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import { chainChannel } from "../../src/runs/chains.ts";
import { Delivery } from "../../src/runs/delivery.ts";
import { Leases } from "../../src/runs/leases.ts";
import { decodeRunMessage, runChannel } from "../../src/runs/channel.ts";
import type { ClaimedRun, Store } from "../../src/store/mod.ts";
import { eventually, openTestStore, type TestStore, uniqueName } from "../_kit/mod.ts";

const replica = {
  heartbeat_interval: 20,
  poll_interval: 20,
  lease: 300,
  shutdown_grace: 0,
};

/** A running run of `owner` in a new session (`link`: it continues the chain of that run). */
async function runOf(store: Store, owner: string, link?: string): Promise<string> {
  const run_id = uniqueName("run");
  await store.createRun("t1", {
    run_id,
    session_id: link ? "s-chain" : uniqueName("s"),
    parent_checkpoint_id: null,
    owner,
    create_session: !link,
    ...(link ? { link: { origin_run_id: link } } : {}),
  });
  return run_id;
}

/**
 * Leases of replica `me` executing `running` (attempt 1 each), over `fx`'s store, giving runs
 * `maxAttempts`; `aborted`, `fenced` and `resumed` list what they did.
 */
function leasesOf(fx: TestStore, running: string[], maxAttempts = 1) {
  const pubsub = createMemoryPubSub({ capacity: 64, prefix: uniqueName("leases") });
  const log = createLogger("error", {}, () => {});
  const aborted: string[] = [];
  const fenced: string[] = [];
  const resumed: ClaimedRun[] = [];
  const leases = new Leases({
    store: fx.store,
    pubsub,
    delivery: new Delivery(pubsub, log, { buffer: 16, drain_timeout: 100 }),
    replicaId: "me",
    replica,
    clock: fx.clock,
    log,
    maxAttempts,
    running: () => running.map((run_id) => ({ run_id, attempt: 1 })),
    abort: (runId) => aborted.push(runId),
    fenced: (runId) => fenced.push(runId),
    renewed: () => {},
    accepting: () => true,
    resume: (run) => resumed.push(run),
  });
  return { leases, pubsub, aborted, fenced, resumed };
}

Deno.test("leases: a lost run out of attempts fails and its end is delivered; ours are kept", async () => {
  await using fx = await openTestStore("sqlite");
  const ours = await runOf(fx.store, "me");
  const lost = await runOf(fx.store, "gone");
  const { leases, pubsub } = leasesOf(fx, [ours]);
  const sub = await pubsub.subscribe(runChannel(lost));
  await leases.open();
  try {
    const run = await eventually(async () => {
      const run = await fx.store.getRun("t1", lost);
      return run?.status === "failed" && run;
    }, { timeout: 10_000, what: "the lost run to be swept" });
    assert.equal(run.error?.code, "replica_lost");
    assert.match(run.error!.message, /last owner gone\)/);
    const [end] = decodeRunMessage((await sub[Symbol.asyncIterator]().next()).value);
    assert.equal(end.seq, null, "nothing was kept of it here: its end goes out live");
    assert.equal(end.event.kind, "run_finished");
    // Ours was heartbeaten all along, through more than a lease.
    assert.equal((await fx.store.getRun("t1", ours))?.status, "running");
  } finally {
    sub.close();
    await leases.close();
    await pubsub.close();
  }
});

Deno.test("leases: a lost run continuing a chain ends for the chain's followers too", async () => {
  await using fx = await openTestStore("sqlite");
  const origin = uniqueName("run");
  await fx.store.createRun("t1", {
    run_id: origin,
    session_id: "s-chain",
    parent_checkpoint_id: null,
    owner: "gone",
    create_session: true,
  });
  await fx.store.finishRun(origin, { status: "interrupted" });
  const turn = await runOf(fx.store, "gone", origin);
  const { leases, pubsub } = leasesOf(fx, []);
  const followers = await pubsub.subscribe(chainChannel(origin));
  await leases.open();
  try {
    const [end] = decodeRunMessage((await followers[Symbol.asyncIterator]().next()).value);
    assert.equal(end.event.kind, "run_finished");
    assert.equal((end.event as { run_id: string }).run_id, turn);
  } finally {
    followers.close();
    await leases.close();
    await pubsub.close();
  }
});

Deno.test("leases: a cancellation recorded in the store aborts the run here", async () => {
  await using fx = await openTestStore("sqlite");
  const ours = await runOf(fx.store, "me");
  const { leases, pubsub, aborted } = leasesOf(fx, [ours]);
  await leases.open();
  try {
    await fx.store.cancelRun("t1", ours);
    await eventually(() => aborted.includes(ours), { what: "the abort" });
  } finally {
    await leases.close();
    await pubsub.close();
  }
});

Deno.test("leases: a lost run is claimed as its next attempt, and its old attempt is fenced", async () => {
  await using fx = await openTestStore("sqlite");
  const lost = await runOf(fx.store, "gone");
  // "me" still believes it executes attempt 1 of the run.
  const { leases, pubsub, resumed, fenced } = leasesOf(fx, [lost], 3);
  // Another replica's sweep, a lease later, claims it first.
  const claimed = await fx.store.claimLostRuns("other", fx.clock.now() + 1_000, 300, 3, 10);
  assert.deepEqual(claimed.resumed.map((r) => [r.run_id, r.attempt, r.owner]), [
    [lost, 2, "gone"],
  ]);
  await leases.open();
  try {
    await eventually(() => fenced.includes(lost), { what: "the old attempt to be fenced" });
    assert.deepEqual(resumed, [], "the run is another replica's now");
    const run = await fx.store.getRun("t1", lost);
    assert.equal(run?.status, "running");
    assert.equal(run?.attempt, 2);
  } finally {
    await leases.close();
    await pubsub.close();
  }
});

Deno.test("leases: SQLite resumes the runs left running when it opens", async () => {
  await using fx = await openTestStore("sqlite");
  const left = await runOf(fx.store, "before-restart");
  fx.clock.advance(1_000);
  const { leases, pubsub, resumed } = leasesOf(fx, [], 3);
  await leases.open();
  try {
    assert.deepEqual(resumed.map((r) => [r.run_id, r.attempt]), [[left, 2]]);
  } finally {
    await leases.close();
    await pubsub.close();
  }
});
