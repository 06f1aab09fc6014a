/**
 * The one contract both stores pass: every `Store` method, its errors, tenant isolation and
 * pagination, one module of steps per behaviour. `sqlite_test.ts` and `postgres_test.ts` run it
 * against real databases.
 */
import assert from "node:assert/strict";
import { TestClock, type TestStore } from "../../_kit/mod.ts";
import { chainSteps } from "./chains.ts";
import { checkpointSteps } from "./checkpoints.ts";
import { finishSteps } from "./finish.ts";
import { contract, newTenant } from "./helpers.ts";
import { isolationSteps } from "./isolation.ts";
import { leaseSteps } from "./leases.ts";
import { messageSteps } from "./messages.ts";
import { paginationSteps } from "./pagination.ts";
import { queueSteps } from "./queue.ts";
import { runSteps } from "./runs.ts";
import { sessionSteps } from "./sessions.ts";
import { steeringSteps } from "./steering.ts";

/** Options of the contract suite. */
export interface ContractOptions {
  /** Registers the test as ignored (its database is not configured). */
  ignore?: boolean;
}

/**
 * Registers the store contract as one `Deno.test` named after `name`, with a step per area.
 * `open` must return a migrated store on `clock` (the steps move it on where they need a later
 * timestamp); every step uses fresh tenants, so a store that keeps data between runs (one
 * PostgreSQL schema, one SQLite file) is fine.
 */
export function storeContract(
  name: string,
  open: (clock: TestClock) => Promise<TestStore>,
  options: ContractOptions = {},
): void {
  Deno.test({ name: `store contract: ${name}`, ignore: options.ignore }, async (t) => {
    const clock = new TestClock();
    await using fx = await open(clock);
    const c = contract(fx.store, clock);
    const { store } = c;

    await t.step("ping answers", async () => {
      await store.ping();
    });
    await sessionSteps(t, c);
    await paginationSteps(t, c);
    await messageSteps(t, c);
    await runSteps(t, c);
    await finishSteps(t, c);
    await leaseSteps(t, c);
    await queueSteps(t, c);
    await steeringSteps(t, c);
    await chainSteps(t, c);
    await checkpointSteps(t, c);
    await isolationSteps(t, c);
    await t.step("migrate twice is a no-op", async () => {
      const tenant = newTenant();
      await store.createSession(tenant, { session_id: "kept" });
      await store.migrate();
      await store.migrate();
      assert.ok(await store.getSession(tenant, "kept"));
    });
  });
}
