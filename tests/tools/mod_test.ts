/**
 * buildTools: one Tool per manifest tool block, and one clear startup error naming every broken
 * block.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { type Config, ManifestSchema } from "../../src/config/schema.ts";
import { buildTools, ToolConfigError } from "../../src/tools/mod.ts";
import { fixture, recordingContext } from "./helpers.ts";

const FIXTURES = dirname(fixture("js_tools.ts"));

function config(tool: Record<string, unknown>): Config {
  return { manifest: ManifestSchema.parse({ agent: { name: "t" }, tool }), baseDir: FIXTURES };
}

Deno.test("buildTools: one Tool per block, modules relative to the manifest", async () => {
  const tools = buildTools(config({
    greet: { kind: "javascript", module: "js_tools.ts", description: "greets" },
    words: { kind: "python", module: "py_tools.py", function: "success" },
    by_url: {
      kind: "javascript",
      module: pathToFileURL(fixture("js_tools.ts")).href,
      function: "echoContext",
    },
  }));
  assert.deepEqual([...tools.keys()], ["greet", "words", "by_url"]);
  assert.equal(tools.get("greet")!.description, "greets");
  const { ctx } = recordingContext({ counter: 0 });
  assert.deepEqual(await tools.get("greet")!.call({ name: "x" }, ctx), {
    result: "hello x",
    is_error: false,
  });
  assert.deepEqual((await tools.get("words")!.call({ text: "a b" }, ctx)).result, { words: 2 });
  assert.equal((await tools.get("by_url")!.call({}, ctx)).is_error, false);
});

Deno.test("buildTools: relative read paths are resolved from the manifest directory", async () => {
  const tools = buildTools(config({
    sibling: {
      kind: "javascript",
      module: "js_tools.ts",
      function: "readSibling",
      permissions: { read: ["."] },
    },
  }));
  const { ctx } = recordingContext();
  assert.deepEqual(await tools.get("sibling")!.call({}, ctx), {
    result: "sibling data",
    is_error: false,
  });
});

Deno.test("buildTools: every broken block is named in one startup error", () => {
  let err: unknown;
  try {
    buildTools(config({
      ok: { kind: "javascript", module: "js_tools.ts" },
      missing: { kind: "javascript", module: "tools/missing.ts" },
      dir: { kind: "javascript", module: "js_helpers" },
      nofn: { kind: "python", module: "py_tools.py" },
      badfn: { kind: "python", module: "py_tools.py", function: "a.b" },
      netpy: {
        kind: "python",
        module: "py_tools.py",
        function: "success",
        sandbox: "none",
        permissions: { net: true },
      },
      hostspy: {
        kind: "python",
        module: "py_tools.py",
        function: "success",
        permissions: { net: ["example.com:443"] },
      },
      nosandboxjs: { kind: "javascript", module: "js_tools.ts", sandbox: "none" },
      commajs: { kind: "javascript", module: "js_tools.ts", permissions: { read: ["a,b"] } },
      remote: { kind: "javascript", module: "https://example.com/tool.ts" },
    }));
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof ToolConfigError, String(err));
  const text = err.message;
  assert.match(
    text,
    /tool 'missing': module file not found: \.\/tools\/missing\.ts \(next to the manifest\)/,
  );
  assert.match(text, /tool 'dir': module is not a file/);
  assert.match(text, /tool 'nofn': a python tool needs function = /);
  assert.match(text, /tool 'badfn': function "a.b" is not a Python identifier/);
  assert.match(
    text,
    /tool 'netpy': permissions.net cannot be enforced for a python tool with sandbox = "none"/,
  );
  assert.match(text, /tool 'hostspy': permissions.net of a python tool is true or false/);
  assert.match(text, /tool 'nosandboxjs': sandbox applies to python tools/);
  assert.match(text, /tool 'commajs': permissions.read has an entry with a comma/);
  assert.match(text, /tool 'remote': module "https:\/\/example.com\/tool.ts" is remote/);
  assert.equal(err.problems.length, 9);
  assert.ok(!text.includes("tool 'ok'"));
});
