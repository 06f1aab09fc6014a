/** The manifest tree helpers (`src/config/tree.ts`). */
import assert from "node:assert/strict";
import { formatPath, isPlainObject } from "../../src/config/tree.ts";

Deno.test("formatPath writes keys dotted and indexes in brackets", () => {
  assert.equal(formatPath([]), "");
  assert.equal(formatPath(["agent", "model", "api_key"]), "agent.model.api_key");
  assert.equal(formatPath(["tool", "add", "parameters", 0, "x"]), "tool.add.parameters[0].x");
  assert.equal(formatPath([0, "a"]), "[0].a");
});

Deno.test("isPlainObject accepts objects only", () => {
  assert.equal(isPlainObject({}), true);
  assert.equal(isPlainObject({ a: 1 }), true);
  for (const value of [null, undefined, [], [{}], "x", 1, true]) {
    assert.equal(isPlainObject(value), false, String(value));
  }
});
