/** Block normalizing (`src/config/normalize.ts`): hcl2json's block lists -> objects and records. */
import assert from "node:assert/strict";
import { type BlockSpec, normalizeBlocks } from "../../src/config/normalize.ts";
import { parseConfig } from "../../src/config/load.ts";
import { assertSome, hcl, MINIMAL, problems } from "./helpers.ts";

Deno.test("JSON in hcl2json's block-list shape is normalized too", async () => {
  const json = JSON.stringify({
    agent: [{ name: "j", model: [{ provider: "echo" }] }],
    tool: { add: [{ kind: "python", module: "/abs/add.py" }] },
  });
  const { manifest } = await parseConfig(json, { filename: "agent.json", env: {} });
  assert.equal(manifest.agent.model.provider, "echo");
  assert.equal(manifest.tool.add.module, "/abs/add.py");
});

Deno.test("a block given twice is an error naming it", async () => {
  const agent = await problems(hcl(`${MINIMAL}${MINIMAL}`));
  assertSome(agent, /^agent: block agent is given 2 times/);
  const model = await problems(
    hcl(`agent {\n  name = "t"\n  model {}\n  model {}\n}\n`),
  );
  assertSome(model, /^agent\.model: block agent\.model is given 2 times/);
  const tool = await problems(hcl(`${MINIMAL}
tool "add" {
  kind = "python"
  module = "a.py"
}
tool "add" {
  kind = "python"
  module = "b.py"
}
`));
  assertSome(tool, /^tool\.add: block tool "add" is given 2 times/);
  const unlabelled = await problems(hcl(`${MINIMAL}tool {\n  kind = "python"\n}\n`));
  assertSome(unlabelled, /^tool: a tool block needs a name/);
});

Deno.test("normalizeBlocks unwraps only the names its spec calls blocks", () => {
  const spec: BlockSpec = { single: { a: { labelled: { b: {} } } }, labelled: { c: {} } };
  const errors: string[] = [];
  const out = normalizeBlocks(
    {
      a: [{ b: { x: [{ deep: 1 }] }, attr: [{ kept: true }] }],
      c: { one: [{ v: 1 }], two: { v: 2 } },
      other: [{ kept: "as is" }],
    },
    spec,
    [],
    errors,
  );
  assert.deepEqual(errors, []);
  assert.deepEqual(out, {
    // A labelled block's body is unwrapped; what is inside it stays as written.
    a: { b: { x: { deep: 1 } }, attr: [{ kept: true }] },
    c: { one: { v: 1 }, two: { v: 2 } },
    other: [{ kept: "as is" }],
  });
});

Deno.test("normalizeBlocks names the dotted path of a repeated block and keeps the first", () => {
  const errors: string[] = [];
  const out = normalizeBlocks(
    { a: [{ b: { n: [{ v: 1 }, { v: 2 }] } }] },
    { single: { a: { labelled: { b: {} } } } },
    ["root"],
    errors,
  );
  assert.deepEqual(errors, ['root.a.b.n: block b "n" is given 2 times; give it once']);
  assert.deepEqual(out, { a: { b: { n: { v: 1 } } } });
});
