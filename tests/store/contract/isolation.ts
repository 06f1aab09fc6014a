/** Tenant isolation: no record of one tenant is visible to, or changeable by, another. */
import assert from "node:assert/strict";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, newId, newTenant, STORE, text } from "./helpers.ts";

/** Registers the isolation steps of the store contract. */
export async function isolationSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store, runningRun, commit } = c;

  await t.step("tenant isolation across every record", async () => {
    const alice = newTenant();
    const bob = newTenant();
    const run = await runningRun(alice, "shared-name");
    const checkpoint = await commit(alice, "shared-name", run.run_id, {
      inputs: [text("secret", { message_id: "m" })],
    });

    assert.equal(await store.getSession(bob, "shared-name"), null);
    assert.equal(await store.getRun(bob, run.run_id), null);
    assert.equal(await store.cancelRun(bob, run.run_id), null);
    assert.equal(await store.getMessage(bob, "shared-name", "m"), null);
    assert.deepEqual(await store.allMessages(bob, "shared-name"), []);
    assert.equal(await store.getCheckpoint(bob, "shared-name", checkpoint.checkpoint_id), null);
    assert.equal(await store.latestCheckpoint(bob, "shared-name"), null);
    assert.equal((await store.listSessions(bob, { per_page: 10 })).count, 0);
    await assertError(store.deleteSession(bob, "shared-name"), 404001, STORE);
    await assertError(store.listMessages(bob, "shared-name", { per_page: 10 }), 404001, STORE);
    await assertError(store.listCheckpoints(bob, "shared-name", { per_page: 10 }), 404001, STORE);
    await assertError(commit(bob, "shared-name", run.run_id), 404001, STORE);
    assert.deepEqual(await store.readStart(bob, "shared-name"), {
      clock: null,
      checkpoint: null,
      messages: [],
    });

    // Bob's session of the same name is his own, and may run while Alice's runs.
    await store.createSession(bob, { session_id: "shared-name" });
    const bobs = await store.createRun(bob, {
      run_id: newId("r"),
      session_id: "shared-name",
      parent_checkpoint_id: null,
      owner: "o",
    });
    assert.deepEqual(
      (await store.listRuns(bob, "shared-name", {}, { per_page: 10 })).items.map((r) => r.run_id),
      [bobs.run_id],
    );
    assert.equal((await store.listMessages(bob, "shared-name", { per_page: 10 })).count, 0);
    assert.equal(await store.latestCheckpoint(bob, "shared-name"), null);
    assert.equal((await store.getRun(alice, run.run_id))?.status, "running");
  });
}
