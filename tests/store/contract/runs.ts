/**
 * Runs: the start boundary (`createRun` with its input messages), reads, the one running run per
 * session, and `listRuns`.
 */
import assert from "node:assert/strict";
import type { Message, Run } from "../../../src/api/schemas.ts";
import { ConversationChanged, newMessages, type Store } from "../../../src/store/mod.ts";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newId, newTenant, STORE, text } from "./helpers.ts";

/** Registers the runs steps of the store contract. */
export async function runSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock, runningRun, commit } = c;

  await t.step("runs: createRun writes the input messages with the run, or nothing", async () => {
    const tenant = newTenant();
    const input = newMessages("s", [text("a", { message_id: "a" }), text("b")], "r-1", clock.now());
    const run = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
      create_session: true,
      expect_clock: 0,
      messages: input,
    });
    assert.deepEqual(await store.allMessages(tenant, "s"), input, "records are stored as given");
    await store.finishRun(run.run_id, { status: "completed" });

    // A used id, a busy session, a moved clock: the run, the session and the input stay unwritten.
    const start = await store.readStart(tenant, "s");
    assert.deepEqual(start.messages, input);
    const again = (messages: Message[], expect_clock?: number) =>
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
        expect_clock,
        messages,
      });
    await assertError(
      again(newMessages("s", [text("x", { message_id: "a" })], null, 0)),
      409005,
      STORE,
    );
    await assert.rejects(
      again(newMessages("s", [text("y")], null, 0), start.clock! - 1),
      ConversationChanged,
    );
    const fresh = newTenant();
    await assertError(
      store.createRun(fresh, {
        run_id: newId("r"),
        session_id: "new",
        parent_checkpoint_id: null,
        owner: "o",
        create_session: true,
        messages: newMessages("new", [text("x", { message_id: "x" }), text("x2")], null, 0)
          .map((m, i) => i === 1 ? { ...m, message_id: "x" } : m),
      }),
      409005,
      STORE,
    );
    assert.equal(await store.getSession(fresh, "new"), null, "a refused run creates no session");
    assert.deepEqual((await store.readStart(tenant, "s")).messages, input);
    assert.equal((await store.listRuns(tenant, "s", {}, { per_page: 10 })).count, 1);
  });

  await t.step("runs: step records are saved per step and attempt, listed per tenant", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    const runId = newId("r");
    await store.createRun(tenant, {
      run_id: runId,
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
    });
    assert.deepEqual(await store.listRunSteps(tenant, runId), []);
    const step = (n: number, kind: "model" | "tools", attempt = 1) => ({
      step: n,
      kind,
      attempt,
      started_at: "2026-11-26T16:00:00.000Z",
      duration_ms: n,
      ...(kind === "model" ? { first_token_ms: 0.5, request: null } : { tool_calls: [] }),
    });
    await store.saveRunStep(runId, step(2, "tools"), 1);
    await store.saveRunStep(runId, step(1, "model"), 1);
    // Written again by the same attempt: replaced.
    await store.saveRunStep(runId, { ...step(2, "tools"), duration_ms: 20 }, 1);
    // A write of an attempt that does not own the run is dropped; without one it is not fenced.
    await store.saveRunStep(runId, step(3, "model", 2), 2);
    await store.saveRunStep(newId("r"), step(1, "model"));
    assert.deepEqual(await store.listRunSteps(tenant, runId), [
      step(1, "model"),
      { ...step(2, "tools"), duration_ms: 20 },
    ]);
    assert.equal(await store.listRunSteps(newTenant(), runId), null);
    assert.equal(await store.listRunSteps(tenant, "nope"), null);
    await store.finishRun(runId, { status: "completed" });
    await store.deleteSession(tenant, "s");
    assert.equal(await store.listRunSteps(tenant, runId), null);
  });

  await t.step("runs: create, get, 404001, one running run per session (409003)", async () => {
    const tenant = newTenant();
    await assertError(
      store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "missing",
        parent_checkpoint_id: null,
        owner: "o",
      }),
      404001,
      STORE,
    );
    const session = await store.createSession(tenant, { session_id: "s" });
    clock.advance(5);
    const runId = newId("r");
    const run = await store.createRun(tenant, {
      run_id: runId,
      session_id: "s",
      parent_checkpoint_id: "cp-0",
      owner: "replica-a",
    });
    assert.deepEqual(run, {
      run_id: runId,
      session_id: "s",
      tenant_id: tenant,
      status: "running",
      attempt: 1,
      created_at: run.created_at,
      updated_at: run.created_at,
      parent_checkpoint_id: "cp-0",
      checkpoint_id: null,
      result: null,
      interrupt_payload: null,
      error: null,
      usage: null,
      finish_reason: null,
      model_steps: [],
      warnings: [],
      cost: null,
    });
    assert.ok(!("owner" in run) && !("heartbeat_at" in run), "lease columns stay private");
    assert.deepEqual(await store.getRun(tenant, runId), run);
    assert.equal(await store.getRun(newTenant(), runId), null);
    assert.equal(await store.getRun(tenant, "nope"), null);
    // What the model reported shows on the record; the rest of the record is untouched.
    const step = { step: 1, finish_reason: "length" as const, usage: { input_tokens: 3 } };
    await store.saveModelReport(runId, {
      provider: "p",
      model: "m",
      steps: [step],
      warnings: ["w"],
    });
    const reported = (await store.getRun(tenant, runId))!;
    assert.deepEqual(reported, {
      ...run,
      usage: { input_tokens: 3 },
      finish_reason: "length",
      model_steps: [step],
      warnings: ["w"],
    });
    // The session's totals: summed over its runs' steps, per tenant; none reported: null.
    const none = { usage: null, cost: null };
    assert.deepEqual(await store.sessionTotals(tenant, "s"), {
      usage: { input_tokens: 3 },
      cost: null,
    });
    assert.deepEqual(await store.sessionTotals(newTenant(), "s"), none);
    // Steps with a cost: the record and the session sum them (a step without one adds nothing).
    const priced = [{ ...step, cost: 0.25 }, { ...step, step: 2, cost: 0.5 }, { ...step, step: 3 }];
    await store.saveModelReport(runId, { provider: "p", model: "m", steps: priced, warnings: [] });
    assert.equal((await store.getRun(tenant, runId))!.cost, 0.75);
    assert.deepEqual(await store.sessionTotals(tenant, "s"), {
      usage: { input_tokens: 9 },
      cost: 0.75,
    });
    await store.saveModelReport(runId, { provider: "p", model: "m", steps: [], warnings: [] });
    assert.deepEqual(await store.sessionTotals(tenant, "s"), none);
    const touched = (await store.getSession(tenant, "s"))!;
    assert.ok(ms(touched.updated_at) > ms(session.updated_at), "run creation bumps updated_at");

    const second = { run_id: newId("r"), session_id: "s", parent_checkpoint_id: null, owner: "o" };
    await assertError(store.createRun(tenant, second), 409003, STORE);
    // Concurrent creations: exactly one wins.
    await store.finishRun(runId, { status: "completed" });
    const racers = await Promise.allSettled(
      [1, 2, 3].map(() =>
        store.createRun(tenant, {
          run_id: newId("r"),
          session_id: "s",
          parent_checkpoint_id: null,
          owner: "o",
        })
      ),
    );
    assert.equal(racers.filter((r) => r.status === "fulfilled").length, 1);
    for (const r of racers) {
      if (r.status === "rejected") await assertError(Promise.reject(r.reason), 409003, STORE);
    }
    // Another session of the tenant is independent.
    await store.createSession(tenant, { session_id: "s2" });
    await store.createRun(tenant, { ...second, session_id: "s2" });
  });

  await t.step("runs: a run id is unique across tenants (409002)", async () => {
    const alice = newTenant();
    const bob = newTenant();
    const run = await runningRun(alice);
    await store.finishRun(run.run_id, { status: "completed" });
    await store.createSession(bob, { session_id: "s" });
    await assertError(
      store.createRun(bob, {
        run_id: run.run_id,
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
      }),
      409002,
      STORE,
    );
    await assertError(
      store.createRun(alice, {
        run_id: run.run_id,
        session_id: run.session_id,
        parent_checkpoint_id: null,
        owner: "o",
      }),
      409002,
      STORE,
    );
    assert.equal(await store.getRun(bob, run.run_id), null);
    assert.equal((await store.listRuns(bob, "s", {}, { per_page: 10 })).count, 0);
  });

  await t.step("runs: listRuns filters, count and pagination", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    await store.createSession(tenant, { session_id: "other" });
    const statuses = ["completed", "failed", "cancelled", "interrupted", "completed"] as const;
    const runs: Run[] = [];
    for (const status of statuses) {
      const run = await store.createRun(tenant, {
        run_id: newId("r"),
        session_id: "s",
        parent_checkpoint_id: null,
        owner: "o",
      });
      runs.push(await store.finishRun(run.run_id, { status }));
      clock.advance(5);
    }
    const live = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
    });
    runs.push(live);
    await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "other",
      parent_checkpoint_id: null,
      owner: "o",
    });
    const ids = (page: { items: Run[] }) => page.items.map((r) => r.run_id);
    const all = runs.map((r) => r.run_id);
    const list = (filter: Parameters<Store["listRuns"]>[2], perPage = 100) =>
      store.listRuns(tenant, "s", filter, { per_page: perPage });

    const everything = await list({});
    assert.deepEqual(ids(everything), all, "only this session's runs, oldest first");
    assert.equal(everything.count, 6);
    assert.deepEqual(everything.items[0], runs[0]);

    const byId = await list({ ids: [all[1], all[3], "nope"] });
    assert.deepEqual(ids(byId), [all[1], all[3]]);
    assert.equal(byId.count, 2);
    assert.deepEqual(ids(await list({ session_ids: ["s"] })), all);
    assert.deepEqual(ids(await list({ session_ids: ["other"] })), []);
    assert.deepEqual(ids(await list({ statuses: ["completed"] })), [all[0], all[4]]);
    assert.deepEqual(ids(await list({ statuses: ["running", "failed"] })), [all[1], all[5]]);
    assert.deepEqual(ids(await list({ ids: [], statuses: [] })), all, "empty lists filter nothing");

    // Bounds are exclusive: before is `<`, after is `>`.
    const created = ms(runs[2].created_at);
    assert.deepEqual(ids(await list({ created_before: created })), all.slice(0, 2));
    assert.deepEqual(ids(await list({ created_after: created })), all.slice(3));
    assert.deepEqual(
      ids(
        await list({
          created_after: ms(runs[0].created_at),
          created_before: ms(runs[4].created_at),
        }),
      ),
      all.slice(1, 4),
    );
    const updated = ms(runs[2].updated_at);
    assert.deepEqual(ids(await list({ updated_before: updated })), all.slice(0, 2));
    assert.deepEqual(ids(await list({ updated_after: updated })), all.slice(3));
    const combined = await list({ statuses: ["completed"], created_after: created });
    assert.deepEqual(ids(combined), [all[4]]);
    assert.equal(combined.count, 1);

    // A checkpoint moves updated_at, so the live run now sorts after its own creation.
    assert.deepEqual(ids(await list({ updated_after: ms(live.updated_at) })), []);
    clock.advance(5);
    const cp = await commit(tenant, "s", live.run_id);
    const late = await store.getRun(tenant, live.run_id);
    assert.equal(late?.checkpoint_id, cp.checkpoint_id);
    assert.ok(ms(late!.updated_at) > ms(live.updated_at));
    assert.deepEqual(ids(await list({ updated_after: ms(live.updated_at) })), [live.run_id]);

    // Paging through a filter, with runs inserted in between.
    const first = await list({ statuses: ["completed", "failed", "cancelled"] }, 2);
    assert.deepEqual(ids(first), [all[0], all[1]]);
    assert.equal(first.count, 4);
    await store.finishRun(live.run_id, { status: "completed" });
    const extra = await store.createRun(tenant, {
      run_id: newId("r"),
      session_id: "s",
      parent_checkpoint_id: null,
      owner: "o",
    });
    await store.finishRun(extra.run_id, { status: "failed" });
    const second = await store.listRuns(tenant, "s", {
      statuses: ["completed", "failed", "cancelled"],
    }, { per_page: 2, page: first.next_page });
    assert.deepEqual(ids(second), [all[2], all[4]]);
    assert.equal(second.count, 6);
    const third = await store.listRuns(tenant, "s", {
      statuses: ["completed", "failed", "cancelled"],
    }, { per_page: 2, page: second.next_page });
    assert.deepEqual(ids(third), [all[5], extra.run_id]);
    assert.equal(third.next_page, null);

    await assertError(store.listRuns(tenant, "missing", {}, { per_page: 10 }), 404001, STORE);
    await assertError(store.listRuns(newTenant(), "s", {}, { per_page: 10 }), 404001, STORE);
  });
}
