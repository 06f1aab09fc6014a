/**
 * The tool library: the tagged "result plus state update" value and how the server recognises it.
 */
import assert from "node:assert/strict";
import { hasMarker } from "../../src/tools/library.ts";
import { WITH_STATE_KEY, WITH_STATE_TAG, withState } from "../../src/tools/mod.ts";

Deno.test("library: withState tags a result and its update with the marker", () => {
  assert.deepEqual(withState({ a: 1 }, { patch: [] }), {
    [WITH_STATE_KEY]: WITH_STATE_TAG,
    result: { a: 1 },
    state: { patch: [] },
  });
  assert.equal(WITH_STATE_KEY, "$agentd");
  assert.equal(WITH_STATE_TAG, "with_state");
});

Deno.test("library: the marker key is recognised, tagged or not, on plain objects only", () => {
  assert.ok(hasMarker(withState(1, { context: {} })));
  assert.ok(hasMarker({ [WITH_STATE_KEY]: "something else" }), "mistagged: still ours to judge");
  for (const value of [null, 1, "x", [WITH_STATE_KEY], { result: 1, state: {} }]) {
    assert.equal(hasMarker(value), false, JSON.stringify(value));
  }
  // An inherited key is not the tool's return value's own.
  assert.equal(hasMarker(Object.create({ [WITH_STATE_KEY]: WITH_STATE_TAG })), false);
});
