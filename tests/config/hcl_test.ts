/** HCL parsing (`src/config/hcl.ts`): `${env.X:-default}` shielding and located diagnostics. */
import assert from "node:assert/strict";
import { parseHcl } from "../../src/config/hcl.ts";
import { hcl, problems } from "./helpers.ts";

Deno.test("HCL syntax errors are reported as file:line:col, one line each", async () => {
  const one = await problems(hcl(`agent {\n  name = \n}\n`));
  assert.equal(one.length, 1);
  assert.match(one[0], /^agent\.hcl:2:10: Invalid expression; /);
  const two = await problems(hcl(`a = "\\q"\nb = "\\z"\n`));
  assert.equal(two.length, 2);
  assert.match(two[0], /^agent\.hcl:1:6: Invalid escape sequence; /);
  assert.match(two[1], /^agent\.hcl:2:6: Invalid escape sequence; /);
  // `${env.X:-default}` is shielded from HCL, so columns after it on the line are still right.
  const shifted = await problems(hcl(`agent {\n  name = "\${env.A:-b}" x\n}\n`));
  assert.match(shifted[0], /^agent\.hcl:2:24: /);
  // The start of a range, also a range inside the detail and a range that ends on another line.
  assert.deepEqual(await problems(hcl(`agent {\n name = "x"\n`)), [
    "agent.hcl:1:7: Unclosed configuration block; There is no closing brace for this block " +
    "before the end of the file. This may be caused by incorrect brace nesting elsewhere in " +
    "this file.",
  ]);
  assert.deepEqual(await problems(hcl(`a = 1\na = 2\n`)), [
    'agent.hcl:2:1: Attribute redefined; The argument "a" was already set at agent.hcl:1:1. ' +
    "Each argument may be set only once.",
  ]);
  const unterminated = await problems(hcl(`x = <<EOT\nhello\n`));
  assert.match(unterminated[0], /^agent\.hcl:3:1: Unterminated template string; /);
});

Deno.test("parseHcl keeps ${env.X:-default} as written and gives blocks as lists", async () => {
  const raw = await parseHcl(
    `agent {\n  name = "\${env.A:-x:-y}"\n  d = "$\${env.B:-z}"\n}\n`,
    "f.hcl",
  );
  // `$${` is HCL's own escape, left for interpolation to turn into a literal `${`.
  assert.deepEqual(raw, { agent: [{ name: "${env.A:-x:-y}", d: "$${env.B:-z}" }] });
});
