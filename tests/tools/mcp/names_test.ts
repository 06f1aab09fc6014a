/**
 * Model-visible names of MCP tools (`SERVER__TOOL`).
 */
import assert from "node:assert/strict";
import { MAX_TOOL_NAME, modelToolNames } from "../../../src/tools/mcp/mod.ts";

const PROVIDER_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

Deno.test("valid tool names are kept behind the server name", () => {
  const names = modelToolNames("github", ["create_issue", "list-prs", "Search2"]);
  assert.deepEqual([...names], [
    ["github__create_issue", "create_issue"],
    ["github__list-prs", "list-prs"],
    ["github__Search2", "Search2"],
  ]);
});

Deno.test("invalid and over-long names get a sanitized prefix and a hash", () => {
  const long = "x".repeat(80);
  const names = modelToolNames("fs", ["read.file", "résumé", long, "a b"]);
  for (const [model] of names) {
    assert.match(model, PROVIDER_NAME);
    assert.ok(model.length <= MAX_TOOL_NAME);
    assert.ok(model.startsWith("fs__"));
  }
  const byMcp = new Map([...names].map(([model, mcp]) => [mcp, model]));
  assert.match(byMcp.get("read.file")!, /^fs__read_file_[0-9a-f]{8}$/);
  assert.match(byMcp.get("a b")!, /^fs__a_b_[0-9a-f]{8}$/);
  assert.equal(byMcp.get(long)!.length, MAX_TOOL_NAME);
  // Exactly 64 characters still fits as it is.
  const fits = "y".repeat(MAX_TOOL_NAME - "fs__".length);
  assert.equal(modelToolNames("fs", [fits]).keys().next().value, `fs__${fits}`);
});

Deno.test("names are deterministic and collision-free", () => {
  // "a.b" and "a b" sanitize to the same text; a valid tool even takes one's hashed name.
  const tools = ["a.b", "a b", "a?b", "a_b"];
  const first = modelToolNames("s", tools);
  assert.equal(first.size, tools.length);
  assert.deepEqual(new Set(first.values()), new Set(tools));
  assert.deepEqual([...modelToolNames("s", [...tools].reverse())].sort(), [...first].sort());
  const taken = first.entries().find(([, mcp]) => mcp === "a b")![0];
  const again = modelToolNames("s", ["a b", taken.slice("s__".length)]);
  assert.equal(again.size, 2, "a valid name equal to a hashed one pushes the hashed one on");
  assert.equal(again.get(taken), taken.slice("s__".length));
  assert.notEqual([...again].find(([, mcp]) => mcp === "a b")![0], taken);
});

Deno.test("a repeated MCP name keeps one entry", () => {
  assert.deepEqual([...modelToolNames("s", ["t", "t"])], [["s__t", "t"]]);
});
