/** A tool's function read from its module's text: present, missing (with a hint), or unknowable. */
import assert from "node:assert/strict";
import { javaScriptExports, missingExport, pythonNames } from "../../src/tools/exports.ts";

Deno.test("JavaScript exports: declarations, lists, renames, destructuring, default", () => {
  const names = javaScriptExports(`
// export function commented() {}
/* export const hidden = 1; */
export async function add() {}
export function* gen() {}
export const shout = () => 1, other = 2;
export class Tool {}
export const { a, b: c } = obj;
export { x, y as z };
export { w } from "./w.ts";
export default function () {}
`);
  assert.deepEqual(
    [...names].sort(),
    ["Tool", "a", "add", "c", "default", "gen", "shout", "w", "x", "z"],
  );
});

Deno.test("Python names: defs, classes, assignments and imports at the top level", () => {
  const names = pythonNames(
    "import os, re as regex\nfrom a import (b, c as d)\n\nasync def run(args):\n" +
      "    def inner(): pass\nclass K:\n    pass\nLIMIT: int = 3\nx = 1\n",
  );
  assert.deepEqual([...names].sort(), ["K", "LIMIT", "b", "d", "os", "regex", "run", "x"]);
});

Deno.test("missingExport says what is missing and what there is; passes what it cannot read", () => {
  const js = "export function add() {}\nexport const shout = 1;\n";
  assert.equal(missingExport("javascript", js, "add"), undefined);
  assert.equal(
    missingExport("javascript", js, "addd"),
    `the module has no export named "addd" (did you mean "add"?); it has: add, shout`,
  );
  assert.equal(
    missingExport("javascript", js, undefined),
    `the module has no default export (name one of its exports with function = "...": add, shout)`,
  );
  assert.equal(missingExport("javascript", `export * from "./all.ts";\n`, "add"), undefined);
  assert.equal(missingExport("python", "def run(a, c):\n  pass\n", "run"), undefined);
  assert.equal(
    missingExport("python", "def run(a, c):\n  pass\n", "walk"),
    `the module defines no function "walk" at its top level; it has: run`,
  );
  assert.equal(missingExport("python", "from lib import *\n", "walk"), undefined);
});
