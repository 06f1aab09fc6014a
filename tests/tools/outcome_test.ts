/**
 * The shared outcome rule both runners use: plain values, values tagged by `withState`, and the
 * checks of a state update against the context.
 */
import assert from "node:assert/strict";
import { checkStateUpdate, interpretReturn, withState } from "../../src/tools/mod.ts";

Deno.test("outcome: plain values, tagged values, state checks", () => {
  assert.deepEqual(interpretReturn({ a: 1 }, null), { result: { a: 1 }, is_error: false });
  assert.deepEqual(interpretReturn(null, null), { result: null, is_error: false });
  // A plain result that merely has `result` and `state` fields is not a state update.
  assert.deepEqual(interpretReturn({ result: 1, state: { patch: [] } }, null), {
    result: { result: 1, state: { patch: [] } },
    is_error: false,
  });
  assert.deepEqual(
    interpretReturn(withState("r", { patch: [{ op: "add", path: "/n", value: 1 }] }), null),
    { result: "r", is_error: false, state: { patch: [{ op: "add", path: "/n", value: 1 }] } },
  );
  const both = interpretReturn(
    { $agentd: "with_state", result: 1, state: { context: {}, patch: [] } },
    {},
  );
  assert.equal(both.is_error, true);
  assert.equal(checkStateUpdate({ context: [1] }, {}).ok, false);
  assert.equal(checkStateUpdate({ patch: [{ op: "add", path: "n", value: 1 }] }, {}).ok, false);
  assert.equal(checkStateUpdate({ patch: [{ op: "add", path: "/n" }] }, {}).ok, false);
  assert.equal(checkStateUpdate({ patch: [{ op: "bogus", path: "/n" }] }, {}).ok, false);
  assert.equal(
    checkStateUpdate({ patch: [{ op: "test", path: "/n", value: 2 }] }, { n: 1 }).ok,
    false,
  );
  assert.equal(
    checkStateUpdate({ patch: [{ op: "replace", path: "", value: [1] }] }, { n: 1 }).ok,
    false,
  );
  assert.equal(checkStateUpdate({ patch: [{ op: "add", path: "/n", value: 1 }] }, null).ok, true);
  // Validation works on a copy: the context is untouched.
  const context = { n: 1 };
  assert.equal(checkStateUpdate({ patch: [{ op: "remove", path: "/n" }] }, context).ok, true);
  assert.deepEqual(context, { n: 1 });
});
