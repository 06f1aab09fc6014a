/** Run chains: links written with the run, `runChain` and `listChains`. */
import assert from "node:assert/strict";
import type { Run } from "../../../src/api/schemas.ts";
import { encodeCursor } from "../../../src/store/cursor.ts";
import type { Store } from "../../../src/store/mod.ts";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, ms, newId, newTenant, STORE } from "./helpers.ts";

/** Registers the chains steps of the store contract. */
export async function chainSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, clock } = c;

  await t.step("run chains: links written with the run, runChain, listChains, paging", async () => {
    const tenant = newTenant();
    const other = newTenant();
    /** A run of `session` finished with `status`, continuing `origin` when given. */
    const run = async (
      session: string,
      status: "completed" | "interrupted" | "cancelled" | null,
      link?: { origin_run_id: string; note?: unknown },
    ) => {
      const created = await store.createRun(tenant, {
        run_id: newId("r"),
        session_id: session,
        parent_checkpoint_id: null,
        owner: "o",
        create_session: true,
        ...(link ? { link } : {}),
      });
      clock.advance(5);
      return status ? await store.finishRun(created.run_id, { status }) : created;
    };
    // Chain A in s1: an origin, then two runs continuing it (the last one completed).
    const a1 = await run("s1", "interrupted");
    const a2 = await run("s1", "interrupted", { origin_run_id: a1.run_id, note: { turn: 2 } });
    const b = await run("s2", "completed");
    const a3 = await run("s1", "completed", { origin_run_id: a1.run_id, note: ["any", "json"] });
    const c = await run("s1", null);

    const chain = await store.runChain(tenant, a1.run_id);
    assert.equal(chain?.origin_run_id, a1.run_id);
    assert.deepEqual(chain?.runs.map((r) => [r.run.run_id, r.note]), [
      [a1.run_id, null],
      [a2.run_id, { turn: 2 }],
      [a3.run_id, ["any", "json"]],
    ]);
    assert.deepEqual(await store.runChain(tenant, a3.run_id), chain, "from any of its runs");
    assert.deepEqual((await store.runChain(tenant, b.run_id))?.runs.map((r) => r.run), [b]);
    assert.equal(await store.runChain(tenant, "nope"), null);
    assert.equal(await store.runChain(other, a1.run_id), null, "another tenant's chain");

    const heads = (page: { items: { origin_run_id: string; run: Run }[] }) =>
      page.items.map((h) => [h.origin_run_id, h.run.run_id]);
    const list = (filter: Parameters<Store["listChains"]>[1], perPage = 50, page?: string | null) =>
      store.listChains(tenant, filter, { per_page: perPage, page });
    // Each chain once, as its latest run, most recently updated first.
    const all = await list({});
    assert.deepEqual(heads(all), [
      [c.run_id, c.run_id],
      [a1.run_id, a3.run_id],
      [b.run_id, b.run_id],
    ]);
    assert.equal(all.count, 3);
    assert.equal(all.next_page, null);
    assert.deepEqual(
      heads(await list({ session_id: "s1" })),
      heads(all).filter(([o]) => o !== b.run_id),
    );
    // Filters apply to the latest run: chain A is completed now, not interrupted.
    assert.deepEqual(heads(await list({ statuses: ["interrupted"] })), []);
    assert.deepEqual(heads(await list({ statuses: ["completed"] })), [
      [a1.run_id, a3.run_id],
      [b.run_id, b.run_id],
    ]);
    assert.deepEqual(heads(await list({ statuses: ["running", "completed"], session_id: "s2" })), [
      [b.run_id, b.run_id],
    ]);
    assert.deepEqual(heads(await list({ updated_since: ms(a3.updated_at) })), [
      [c.run_id, c.run_id],
      [a1.run_id, a3.run_id],
    ], "inclusive");
    assert.equal((await list({ updated_since: ms(c.updated_at) + 1 })).count, 0);
    assert.deepEqual(heads(await store.listChains(other, {}, { per_page: 10 })), []);

    // Pages of one, newest first; a chain that moves while a client pages is not repeated.
    const first = await list({}, 1);
    assert.deepEqual(heads(first), [[c.run_id, c.run_id]]);
    assert.equal(first.count, 3);
    const second = await list({}, 1, first.next_page);
    assert.deepEqual(heads(second), [[a1.run_id, a3.run_id]]);
    const third = await list({}, 1, second.next_page);
    assert.deepEqual(heads(third), [[b.run_id, b.run_id]]);
    assert.equal(third.next_page, null);
    await assertError(list({}, 1, "not-a-cursor"), 422000, STORE);
    await assertError(list({}, 1, encodeCursor(3)), 422000, STORE);

    // A session's links go with it.
    await store.finishRun(c.run_id, { status: "completed" });
    await store.deleteSession(tenant, "s1");
    assert.equal(await store.runChain(tenant, a1.run_id), null);
    assert.deepEqual(heads(await list({})), [[b.run_id, b.run_id]]);
  });
}
