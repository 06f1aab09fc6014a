/** "Did you mean" hints (`src/config/suggest.ts`). */
import assert from "node:assert/strict";
import { closest } from "../../src/config/suggest.ts";

Deno.test("closest suggests the nearest name at most 3 edits away", () => {
  assert.equal(closest("max_step", ["name", "max_steps"]), "max_steps");
  assert.equal(
    closest("AGENT__PUBSUB__KINDS", ["AGENT__PUBSUB__URL", "AGENT__PUBSUB__KIND"]),
    "AGENT__PUBSUB__KIND",
  );
  assert.equal(closest("abc", ["xyz"]), "xyz");
  assert.equal(closest("abcd", ["wxyz"]), undefined);
  assert.equal(closest("colour", ["name", "description"]), undefined);
  assert.equal(closest("x", []), undefined);
  // Of equally near candidates, the first wins.
  assert.equal(closest("ab", ["ax", "xb"]), "ax");
});
