/**
 * What the model sees of an MCP tool result: structured content, text, other blocks, errors.
 */
import assert from "node:assert/strict";
import { resultOutcome } from "../../../src/tools/mcp/mod.ts";

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
