/**
 * The literal-subset HCL parser (`src/config/hcl_literal.ts`) gives exactly hcl2json's tree for
 * every manifest it takes, and leaves the rest (and every mistake) to hcl2json. The corpus: the
 * examples, every `hcl` block of the docs, and the edge cases below.
 */
import assert from "node:assert/strict";
import { parse as hcl2json } from "@cdktn/hcl2json";
import { parseHclLiteral } from "../../src/config/hcl_literal.ts";
import { shieldDefaults } from "../../src/config/hcl.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

const EDGES = [
  'a = "x${env.FOO}y"',
  'a = "${ env.FOO }"',
  "a = env.FOO",
  'a = "$${x}"',
  'a = "\\u00e9\\n\\t\\"q\\\\"',
  'a = "line\\n${env.X}"',
  "a = 1.50\nb = -3\nc = 1e3\nd = 0.1\ne = 10000000000000000000",
  "a = true\nb = false\nc = null",
  'a = [1, "b", [true]]',
  'a = { x = 1, "y" = 2, z: 3 }',
  "a = {\n  x = 1\n  y = { z = [\n    1,\n    2,\n  ] }\n}",
  "b {\n  c = 1\n}\nb {\n  c = 2\n}",
  't "x" "y" {\n a = 1\n}\nt "x" "z" {\n}\nt w {\n}',
  "h = <<EOT\n  hi\n  ${env.X} there\nEOT\n",
  "h = <<-EOT\n    hi\n      there\n    EOT\n",
  'a = { "a.b" = 1 }',
  'a = "%{ if true }x%{ endif }"',
  "a = 1 + 2",
  "b {}\nc { d = 1 }\nx = { }",
  "a = 1 # one\n// two\n/* three */ b = 2",
  'a = "é"',
  'model { provider = "echo" }',
  "protocol { ag_ui {} }",
  "a = 1\na = 2",
  "a = 1\na {\n}",
  "a = [1 2]",
  'a = "unterminated',
  "b {\n  c = 1 }",
  "a = 1 b = 2",
  "a = -",
  "a = 1.",
  'a = "${env.X:-default}"',
];

async function corpus(): Promise<{ name: string; text: string }[]> {
  const out = EDGES.map((text, i) => ({ name: `edge ${i}: ${JSON.stringify(text)}`, text }));
  for (const example of ["quickstart", "openai", "mcp"]) {
    const text = await Deno.readTextFile(`${ROOT}examples/${example}/agent.hcl`);
    out.push({ name: `examples/${example}`, text });
  }
  for (const dir of ["docs/", ""]) {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      if (!entry.name.endsWith(".md")) continue;
      const md = await Deno.readTextFile(`${ROOT}${dir}${entry.name}`);
      let i = 0;
      for (const m of md.matchAll(/```hcl\n([\s\S]*?)```/g)) {
        out.push({ name: `${dir}${entry.name} block ${i++}`, text: m[1] });
      }
    }
  }
  return out;
}

async function reference(text: string): Promise<unknown> {
  try {
    return await hcl2json("t.hcl", text);
  } catch {
    return "error";
  }
}

Deno.test("hcl_literal: every tree it gives is hcl2json's; what it leaves, hcl2json takes", async () => {
  let taken = 0;
  for (const { name, text } of await corpus()) {
    const shielded = shieldDefaults(text);
    const mine = parseHclLiteral(shielded);
    if (mine === undefined) continue;
    taken++;
    assert.deepEqual(mine, await reference(shielded), name);
  }
  assert.ok(taken > 20, `the subset covers most of the corpus (${taken})`);
});

Deno.test("hcl_literal: the examples and plain manifests are in the subset", async () => {
  for (const example of ["quickstart", "openai", "mcp"]) {
    const text = await Deno.readTextFile(`${ROOT}examples/${example}/agent.hcl`);
    assert.notEqual(parseHclLiteral(shieldDefaults(text)), undefined, example);
  }
});

Deno.test("hcl_literal: mistakes and expressions are left to hcl2json", () => {
  for (
    const text of [
      "a = 1\na = 2",
      "a = [1 2]",
      'a = "unterminated',
      "a = 1 + 2",
      "a = env.FOO",
      'a = "%{ if true }x%{ endif }"',
      "protocol { ag_ui {} }",
      "b {\n  c = 1 }",
      "}",
      "a = 1e400",
    ]
  ) {
    assert.equal(parseHclLiteral(text), undefined, text);
  }
});
