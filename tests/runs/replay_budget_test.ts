/**
 * The replay budget (runs/replay_budget.ts): large messages held for resumed streams, shared by
 * key, bounded together; a stream past the bound waits for a release, or is refused at_capacity.
 */
import assert from "node:assert/strict";
import { ReplayBudget } from "../../src/runs/replay_budget.ts";
import { RunServiceError } from "../../src/runs/errors.ts";

Deno.test("replay budget: shared keys cost once, a stream past the bound waits for a release", async () => {
  const budget = new ReplayBudget(10, 60_000);
  const a = await budget.hold([{ key: "run-a\n3", bytes: 6 }]);
  // The same snapshot for another stream: no more room taken.
  const a2 = await budget.hold([{ key: "run-a\n3", bytes: 6 }]);
  assert.equal(budget.held, 6);
  // Another run's 6 bytes would pass 10: it waits.
  let admitted = false;
  const b = budget.hold([{ key: "run-b\n3", bytes: 6 }]).then((r) => {
    admitted = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(admitted, false);
  a();
  a(); // a release is taken once
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(admitted, false, "still held by the other stream of run-a");
  a2();
  const releaseB = await b;
  assert.equal(budget.held, 6);
  releaseB();
  assert.equal(budget.held, 0);
});

Deno.test("replay budget: one replay alone passes however large; a wait has an end", async () => {
  const budget = new ReplayBudget(10, 50);
  const big = await budget.hold([{ key: "big\n1", bytes: 1_000 }]);
  assert.equal(budget.held, 1_000);
  const refused = await budget.hold([{ key: "other\n1", bytes: 1 }]).catch((e) => e);
  assert.ok(refused instanceof RunServiceError);
  assert.equal(refused.kind, "at_capacity");
  assert.match(refused.message, /max_replay_bytes/);
  big();
  assert.equal(budget.held, 0);
});
