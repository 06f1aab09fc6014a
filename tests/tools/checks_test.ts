/**
 * Startup checks of tool blocks beyond the schema: the files a tool must never reach, what its
 * directory may hold, and the warning for a Python tool without the OS sandbox. (A whole server
 * refusing such tools: isolation_test.ts.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Config, ManifestSchema } from "../../src/config/schema.ts";
import { toolDirProblems } from "../../src/tools/checks.ts";
import { protectedFiles, toolWarnings } from "../../src/tools/mod.ts";
import { tempDir } from "../_kit/mod.ts";
import { spec } from "./helpers.ts";

function config(manifest: Record<string, unknown>, baseDir: string, source?: string): Config {
  return { manifest: ManifestSchema.parse({ agent: { name: "t" }, ...manifest }), baseDir, source };
}

Deno.test("checks: the manifest and a SQLite file are protected, by their real paths", async () => {
  await using dir = await tempDir("agentd_checks_");
  await dir.write({ "real/agent.hcl": "", "real/data.db": "" });
  await Deno.symlink(dir.join("real"), dir.join("link"));
  const sqlite = config(
    { runtime: { storage: { path: "data.db" } } },
    dir.join("link"),
    dir.join("link/agent.hcl"),
  );
  const real = await Deno.realPath(dir.join("real"));
  assert.deepEqual(protectedFiles(sqlite), [join(real, "agent.hcl"), join(real, "data.db")]);
  // Not a file: an in-memory store, a PostgreSQL store, a manifest given as a value.
  const memory = config({ runtime: { storage: { path: ":memory:" } } }, dir.path);
  assert.deepEqual(protectedFiles(memory), []);
  const postgres = config(
    { runtime: { storage: { kind: "postgres", url: "postgres://x/y" } } },
    dir.path,
  );
  assert.deepEqual(protectedFiles(postgres), []);
});

Deno.test("checks: a tool's directory holds no protected file and no way out", async () => {
  await using dir = await tempDir("agentd_checks_");
  await using outside = await tempDir("agentd_outside_");
  await dir.write({ "tool/t.ts": "", "tool/sub/ok.ts": "", "tool/secret.db": "" });
  await outside.write({ "elsewhere.txt": "" });
  await Deno.symlink(outside.join("elsewhere.txt"), dir.join("tool/sub/out.txt"));
  await Deno.symlink(dir.join("tool/sub/ok.ts"), dir.join("tool/in.ts"));
  const tool = spec("t", { kind: "javascript", module: dir.join("tool/t.ts") });
  const secret = await Deno.realPath(dir.join("tool/secret.db"));
  const problems = toolDirProblems(tool, [secret]);
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.match(problems[0], /^tool 't': its directory .* also holds .*secret\.db/);
  assert.match(problems[1], /^tool 't': .*out\.txt is a symlink to .*elsewhere\.txt, outside/);
  // The Python sandbox mounts nothing a symlink could lead to: only the protected file counts.
  assert.deepEqual(toolDirProblems(tool, [secret], false), [problems[0]]);
  // A missing module is reported elsewhere.
  const missing = spec("m", { kind: "javascript", module: dir.join("tool/none.ts") });
  assert.deepEqual(toolDirProblems(missing, [secret]), []);
});

Deno.test("checks: only a Python tool without the OS sandbox gets a warning", () => {
  const tools = config({
    tool: {
      open: { kind: "python", module: "a.py", function: "f", sandbox: "none" },
      boxed: { kind: "python", module: "a.py", function: "f" },
      js: { kind: "javascript", module: "a.ts" },
    },
  }, "/");
  const warnings = toolWarnings(tools);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^tool 'open': sandbox = "none": it runs without the OS sandbox/);
});
