/** The whole manifest's schema (`src/config/schema.ts`): what it checks across blocks. */
import assert from "node:assert/strict";
import { ManifestSchema } from "../../src/config/schema.ts";
import { hcl as parse, MINIMAL, problems } from "./helpers.ts";

/** Parses `text` after a minimal agent block. */
function hcl(text: string) {
  return parse(`${MINIMAL}${text}`);
}

Deno.test("mcp_server names keep SERVER__TOOL unambiguous; tools may not take their names", async () => {
  for (const bad of ["my__fs", "fs_", "9fs", "f.s", "x".repeat(33)]) {
    const [line] = await problems(hcl(`mcp_server "${bad}" {\n  command = ["a"]\n}`));
    assert.match(line, new RegExp(`^mcp_server\\.${bad.replace(".", "\\.")}: the name must start`));
  }
  for (const good of ["fs", "git-hub", "My_Server2", "x".repeat(32)]) {
    await hcl(`mcp_server "${good}" {\n  command = ["a"]\n}`);
  }
  const tool = (name: string) =>
    `tool "${name}" {\n  kind = "javascript"\n  module = "t.ts"\n}\nmcp_server "fs" {\n  command = ["a"]\n}`;
  for (const taken of ["fs", "fs__read"]) {
    assert.deepEqual(await problems(hcl(tool(taken))), [
      `tool.${taken}: the name is taken by mcp_server "fs" (it names the server, and fs__* its ` +
      "tools); rename the tool or the server",
    ]);
  }
  await hcl(tool("fs_read"));
});

Deno.test("a minimal manifest gets every block's defaults and no http_server", () => {
  const manifest = ManifestSchema.parse({ agent: { name: "t" } });
  assert.deepEqual(
    { capability: manifest.capability, tool: manifest.tool, mcp_server: manifest.mcp_server },
    { capability: {}, tool: {}, mcp_server: {} },
  );
  assert.equal(manifest.runtime.storage.timeout, 5000);
  assert.equal(manifest.runtime.log_level, "info");
  assert.equal(manifest.http_server, undefined);
  assert.equal(ManifestSchema.safeParse({}).success, false);
});
