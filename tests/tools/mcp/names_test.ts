/**
 * Model-visible names of MCP tools (`SERVER__TOOL`) and what the model sees of a result.
 */
import assert from "node:assert/strict";
import { MAX_TOOL_NAME, modelToolNames, resultOutcome } from "../../../src/tools/mcp/mod.ts";

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

Deno.test("results: structured content, text, blocks, errors", () => {
  assert.deepEqual(
    resultOutcome({
      content: [{ type: "text", text: '{"sum":3}' }],
      structuredContent: { sum: 3 },
    }),
    { result: { sum: 3 }, is_error: false },
  );
  assert.deepEqual(
    resultOutcome({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }),
    { result: "a\nb", is_error: false },
  );
  assert.deepEqual(
    resultOutcome({
      content: [
        { type: "text", text: "see" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource_link", uri: "file:///x", name: "x" },
        { type: "resource", resource: { uri: "file:///y", text: "why", mimeType: "text/plain" } },
        { type: "resource", resource: { uri: "file:///z", blob: "AAA=" } },
      ],
    }).result,
    [
      "see",
      {
        type: "image",
        mime_type: "image/png",
        bytes: 3,
        omitted: "binary content is not passed to the model",
      },
      { type: "resource_link", uri: "file:///x", name: "x" },
      { type: "resource", uri: "file:///y", mime_type: "text/plain", text: "why" },
      {
        type: "resource",
        uri: "file:///z",
        bytes: 2,
        omitted: "binary content is not passed to the model",
      },
    ],
  );
  assert.deepEqual(
    resultOutcome({ content: [{ type: "text", text: "no such file" }], isError: true }),
    { result: "no such file", is_error: true },
  );
  assert.equal(resultOutcome({ content: [], isError: true }).is_error, true);
  const huge = resultOutcome({ content: [{ type: "text", text: "x".repeat(2_000_000) }] });
  assert.equal(huge.is_error, true);
  assert.match(JSON.stringify(huge.result), /too large/);
});
