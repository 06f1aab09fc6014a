/**
 * The run queue over HTTP (runtime.runs.max_concurrent), on each store: detached runs beyond the
 * limit wait `queued` and start FIFO as slots free, never more than the limit at once; a tenant's
 * flood waits another tenant's run one slot at most; a queued run can be cancelled and never
 * runs; an attached run beyond the limit is answered 503 with `Retry-After` (`reject`). The
 * attached run that waits (`wait`) is in attached_queue_test.ts.
 */
import assert from "node:assert/strict";
import {
  assertError,
  eventually,
  pacedModel,
  startTestServer,
  storeKinds,
  type TestServer,
  userText,
} from "../_kit/mod.ts";

/** An echo run of a few words, `ms` between them. */
const body = (ms: number) => ({
  messages: [userText("one two three four")],
  model: pacedModel(ms),
});

async function startDetached(t: TestServer, ms: number, tenant?: string): Promise<string> {
  const res = await t.fetch("/v1/runs/start", { method: "POST", json: body(ms), tenant });
  assert.equal(res.status, 202, await res.clone().text());
  return (await res.json()).run_id;
}

async function runStatus(t: TestServer, runId: string, tenant?: string): Promise<string> {
  const res = await t.fetch(`/v1/runs/${runId}`, { tenant });
  assert.equal(res.status, 200);
  return (await res.json()).status;
}

/** The replica's log lines with `msg`, parsed. */
function logged(t: TestServer, msg: string): Record<string, unknown>[] {
  return t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === msg);
}

/** The most runs the replica executed at once, replayed from its start and finish log lines. */
function mostAtOnce(t: TestServer): number {
  let now = 0;
  let most = 0;
  for (const line of t.logs.map((l) => JSON.parse(l))) {
    if (line.msg === "run started" || line.msg === "queued run started") now++;
    if (line.msg === "run finished") now--;
    most = Math.max(most, now);
  }
  return most;
}

const queueManifest = { runtime: { runs: { max_concurrent: 2 } } };

for (const store of storeKinds) {
  Deno.test(`run queue (${store}): 10 detached runs, 2 at once, all complete FIFO`, async () => {
    await using t = await startTestServer({ store, manifest: queueManifest });
    let most = 0;
    const sampler = setInterval(() => most = Math.max(most, t.server.runs.activeCount), 2);
    try {
      const ids: string[] = [];
      // 400 ms a run: the first two still run while the other eight are submitted, on a loaded
      // machine too (at 80 ms a run, CI had only 7 of them queued).
      for (let i = 0; i < 10; i++) ids.push(await startDetached(t, 100));
      // The last ones wait their turn.
      assert.equal(await runStatus(t, ids[9]), "queued");
      await eventually(async () => {
        for (const id of ids) if (await runStatus(t, id) !== "completed") return false;
        return true;
      }, { timeout: 30_000, what: "all 10 runs completed" });
      const started = logged(t, "queued run started").map((l) => l.run_id);
      assert.equal(logged(t, "run started").length + started.length, 10);
      // The queued ones started in the order they were submitted.
      assert.deepEqual(started, ids.slice(ids.length - started.length));
      assert.ok(started.length >= 8, `${started.length} runs queued`);
    } finally {
      clearInterval(sampler);
    }
    assert.ok(most <= 2, `${most} runs at once`);
    assert.ok(mostAtOnce(t) <= 2, `${mostAtOnce(t)} runs at once by the log`);
    assert.equal(t.server.runs.activeCount, 0);
    // The queue's metrics: each queued run counted and its wait observed; the queue drained.
    const queued = logged(t, "queued run started").length;
    await eventually(async () => {
      const text = await (await t.fetch("/metrics")).text();
      const value = (name: string) =>
        Number(text.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1] ?? NaN);
      assert.equal(value("agentd_runs_queued_total"), queued);
      assert.equal(value("agentd_run_queue_wait_seconds_count"), queued);
      assert.ok(value("agentd_run_queue_wait_seconds_sum") > 0);
      assert.equal(value("agentd_run_queue_depth"), 0);
      return true;
    }, { what: "the queue's metrics" });
  });

  Deno.test(`run queue (${store}): a flooding tenant waits another's run one slot`, async () => {
    await using t = await startTestServer({ store, manifest: queueManifest });
    const flood: string[] = [];
    // Slow enough that the flood still waits when the other tenant's run comes.
    for (let i = 0; i < 8; i++) flood.push(await startDetached(t, 150, "flood"));
    const other = await startDetached(t, 20, "other");
    await eventually(async () => await runStatus(t, other, "other") === "completed", {
      timeout: 30_000,
      what: "the other tenant's run completed",
    });
    await eventually(async () => {
      for (const id of flood) if (await runStatus(t, id, "flood") !== "completed") return false;
      return true;
    }, { timeout: 30_000, what: "the flood completed" });
    // The queued runs that started after the other tenant's run was queued, in order.
    const lines = t.logs.map((l) => JSON.parse(l));
    const queuedAt = lines.findIndex((l) => l.msg === "run queued" && l.run_id === other);
    assert.ok(queuedAt >= 0);
    const started = lines.slice(queuedAt).filter((l) => l.msg === "queued run started")
      .map((l) => l.run_id);
    // It took the first slot that freed after it was queued, or the one after (a flood run that
    // was being taken as it was queued, or ranked level with it while the flood executed none).
    const at = started.indexOf(other);
    assert.ok(at === 0 || at === 1, `started ${at}th after it was queued: ${started}`);
    assert.ok(started.length > 1, "flood runs were still queued behind it");
  });

  Deno.test(`run queue (${store}): cancel a queued run; attached beyond it is 503`, async () => {
    await using t = await startTestServer({
      store,
      manifest: { runtime: { runs: { max_concurrent: 1, attached_at_capacity: "reject" } } },
    });
    const long = await startDetached(t, 2_000);
    const waiting = await startDetached(t, 1);
    assert.equal(await runStatus(t, waiting), "queued");
    const attached = await t.fetch("/v1/runs", { method: "POST", json: body(1) });
    assert.equal(attached.headers.get("retry-after"), "1");
    await assertError(attached, 503004);

    const cancel = await t.fetch(`/v1/runs/${waiting}/cancel`, { method: "PUT" });
    assert.ok(cancel.ok, `cancel answered ${cancel.status}`);
    assert.equal(await runStatus(t, waiting), "cancelled");
    const cancelLong = await t.fetch(`/v1/runs/${long}/cancel`, { method: "PUT" });
    assert.ok(cancelLong.ok);
    await eventually(() => t.server.runs.activeCount === 0, { what: "the long run stopped" });
    // The slot is free again: a new run starts at once (the freed slot took nothing queued).
    const after = await startDetached(t, 1);
    await eventually(async () => await runStatus(t, after) === "completed", {
      what: "a run after the cancelled ones completed",
    });
    assert.equal(await runStatus(t, waiting), "cancelled");
    assert.ok(!logged(t, "queued run started").some((l) => l.run_id === waiting));
  });
}

Deno.test({
  name: "run queue (postgres): a replica with a free slot takes another replica's queued runs",
  ignore: !storeKinds.includes("postgres"),
}, async () => {
  await using a = await startTestServer({
    store: "postgres",
    replicaId: "replica-a",
    manifest: { runtime: { runs: { max_concurrent: 1 } } },
  });
  const schema = (a.config.manifest.runtime.storage as { schema: string }).schema;
  await using b = await startTestServer({
    store: "postgres",
    replicaId: "replica-b",
    shared: { schema },
    clock: a.clock,
    manifest: { runtime: { runs: { max_concurrent: 2 } } },
  });
  const long = await startDetached(a, 200);
  const queued = [await startDetached(a, 5), await startDetached(a, 5)];
  assert.deepEqual(logged(a, "run queued").map((l) => l.run_id), queued);
  await eventually(async () => {
    for (const id of [long, ...queued]) if (await runStatus(a, id) !== "completed") return false;
    return true;
  }, { timeout: 30_000, what: "all three runs completed" });
  // A was busy with its long run: B, idle, took both queued runs.
  assert.deepEqual(logged(b, "queued run started").map((l) => l.run_id), queued);
  assert.deepEqual(logged(a, "queued run started"), []);
});

for (const store of storeKinds) {
  Deno.test(`run queue (${store}): per-tenant limits answer 429 with Retry-After`, async () => {
    await using t = await startTestServer({
      store,
      manifest: {
        runtime: { runs: { max_concurrent: 1, tenant_max_runs: 3, tenant_max_queued: 1 } },
      },
    });
    const refused = async (res: Response, limit: string) => {
      assert.equal(res.headers.get("retry-after"), "1");
      const body = await assertError(res, 429001);
      assert.match(String(body.message), new RegExp(limit));
    };
    // Tenant a: one executing, one queued; a second queued run is past tenant_max_queued.
    const long = await startDetached(t, 2_000, "a");
    const waiting = await startDetached(t, 1, "a");
    assert.equal(await runStatus(t, waiting, "a"), "queued");
    await refused(
      await t.fetch("/v1/runs/start", { method: "POST", json: body(1), tenant: "a" }),
      "tenant_max_queued",
    );
    // Attached (it would wait too) alike.
    await refused(
      await t.fetch("/v1/runs", { method: "POST", json: body(1), tenant: "a" }),
      "tenant_max_queued",
    );
    // Another tenant is not held to a's counts.
    const other = await startDetached(t, 1, "b");
    assert.equal(await runStatus(t, other, "b"), "queued");
    await t.fetch(`/v1/runs/${other}/cancel`, { method: "PUT", tenant: "b" });
    // With a free slot, tenant_max_runs counts executing and queued runs: 3 unfinished at most.
    for (const id of [long, waiting]) {
      await t.fetch(`/v1/runs/${id}/cancel`, { method: "PUT", tenant: "a" });
    }
    await eventually(() => t.server.runs.activeCount === 0, { what: "the slot freed" });
    const wide = await startTestServer({
      store,
      manifest: { runtime: { runs: { tenant_max_runs: 2 } } },
    });
    try {
      const ids = [await startDetached(wide, 2_000, "a"), await startDetached(wide, 2_000, "a")];
      await refused(
        await wide.fetch("/v1/runs/start", { method: "POST", json: body(1), tenant: "a" }),
        "tenant_max_runs",
      );
      await startDetached(wide, 1, "b");
      await wide.fetch(`/v1/runs/${ids[0]}/cancel`, { method: "PUT", tenant: "a" });
      // One ended: the next run of a starts.
      await eventually(async () => await runStatus(wide, ids[0], "a") === "cancelled", {
        what: "the cancel",
      });
      const next = await startDetached(wide, 1, "a");
      await eventually(async () => await runStatus(wide, next, "a") === "completed", {
        what: "a's next run completed",
      });
      await wide.fetch(`/v1/runs/${ids[1]}/cancel`, { method: "PUT", tenant: "a" });
      await eventually(() => wide.server.runs.activeCount === 0, { what: "the runs stopped" });
    } finally {
      await wide.close();
    }
  });
}

for (const store of storeKinds) {
  Deno.test(`run queue (${store}): tenant_max_running keeps slots free for other tenants`, async () => {
    await using t = await startTestServer({
      store,
      manifest: { runtime: { runs: { max_concurrent: 4, tenant_max_running: 2 } } },
    });
    const flood: string[] = [];
    // Each flood run lasts ~3 s: they all are submitted while the first two execute.
    for (let i = 0; i < 5; i++) flood.push(await startDetached(t, 750, "flood"));
    // Two execute; the rest wait although the replica has free slots.
    assert.deepEqual(logged(t, "run queued").map((l) => l.run_id), flood.slice(2));
    // Another tenant's run takes a free slot at once.
    const other = await startDetached(t, 1, "other");
    await eventually(async () => {
      for (const id of flood) if (await runStatus(t, id, "flood") !== "completed") return false;
      return await runStatus(t, other, "other") === "completed";
    }, { timeout: 30_000, what: "every run completed" });
    // Never more than two of the flood at once, in submit order.
    let now = 0;
    let most = 0;
    for (const line of t.logs.map((l) => JSON.parse(l))) {
      if (line.tenant !== "flood") continue;
      if (line.msg === "run started" || line.msg === "queued run started") now++;
      if (line.msg === "run finished") now--;
      most = Math.max(most, now);
    }
    assert.equal(most, 2);
    // The other tenant's run started before any of the flood's waiting ones.
    const order = t.logs.map((l) => JSON.parse(l))
      .filter((l) => l.msg === "run started" || l.msg === "queued run started")
      .map((l) => l.run_id);
    assert.deepEqual(order.filter((id) => id !== other), flood);
    assert.equal(order.indexOf(other), 2, `${order}`);
  });
}
