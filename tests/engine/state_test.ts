/**
 * The agent state's updates (engine/state.ts): a whole context or a patch, and the events that
 * describe the change.
 */
import assert from "node:assert/strict";
import { applyStateUpdate } from "../../src/engine/state.ts";

Deno.test("applyStateUpdate: empty snapshot then delta from null, delta, no-op, bad patch", () => {
  const fromNull = applyStateUpdate(null, { context: { a: 1 } });
  assert.deepEqual(fromNull.context, { a: 1 });
  const first = fromNull.events();
  assert.deepEqual(first.map((e) => e.kind), ["state_snapshot", "state_delta"]);
  assert.deepEqual(first[0].kind === "state_snapshot" && first[0].context, {});
  assert.deepEqual(first[1].kind === "state_delta" && first[1].delta, [
    { op: "add", path: "/a", value: 1 },
  ]);
  const patchedNull = applyStateUpdate(null, { patch: [{ op: "add", path: "/n", value: 2 }] });
  assert.deepEqual(patchedNull.events().map((e) => e.kind), ["state_snapshot", "state_delta"]);

  const whole = applyStateUpdate({ a: 1, b: 2 }, { context: { a: 1, c: 3 } });
  const delta = whole.events()[0];
  assert.equal(delta.kind, "state_delta");
  assert.deepEqual(delta.kind === "state_delta" && delta.delta, [
    { op: "remove", path: "/b" },
    { op: "add", path: "/c", value: 3 },
  ]);
  assert.deepEqual(applyStateUpdate({ a: 1 }, { context: { a: 1 } }).events(), []);

  const before = { list: [1] };
  const patched = applyStateUpdate(before, { patch: [{ op: "add", path: "/list/-", value: 2 }] });
  assert.deepEqual(patched.context, { list: [1, 2] });
  assert.deepEqual(before, { list: [1] }, "the previous context is not mutated");

  assert.throws(() => applyStateUpdate({}, { patch: [{ op: "remove", path: "/x" }] }));
  assert.throws(() => applyStateUpdate({}, { patch: [{ op: "replace", path: "", value: 3 }] }));
});
