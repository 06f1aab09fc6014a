/**
 * `check` is the truth: what would fail at `serve` or at the first call fails `check` with exit 2,
 * and each problem names the `file:line:col` of what it is about, paths as written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./_kit/mod.ts";

const ROOT = join(import.meta.dirname!, "..");

async function check(dir: string, env: Record<string, string> = {}) {
  const inherited = Object.entries(Deno.env.toObject()).filter(([k]) => !k.startsWith("AGENT__"));
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-prompt", "--config", join(ROOT, "deno.json")]
      .concat([join(ROOT, "main.ts"), "check", "agent.hcl"]),
    cwd: dir,
    clearEnv: true,
    env: { ...Object.fromEntries(inherited), NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

const TOOLS = {
  "tools/math.js": "export function add({ a, b }) {\n  return a + b;\n}\n" +
    "export const shout = ({ text }) => text.toUpperCase();\n",
  "tools/words.py": "import re\n\ndef count(args, ctx):\n    return len(args['text'].split())\n",
};

function manifest(tools: string, extra = ""): string {
  return `agent {\n  name = "x"\n  model {\n    provider = "echo"\n  }\n}\n\n${tools}${extra}`;
}

Deno.test("check: a misspelt JavaScript export is exit 2 at the function attribute", async () => {
  await using dir = await tempDir();
  await dir.write({
    ...TOOLS,
    "agent.hcl": manifest(
      `tool "add" {\n  kind     = "javascript"\n  module   = "./tools/math.js"\n  function = "addd"\n}\n`,
    ),
  });
  const { code, stderr } = await check(dir.path);
  assert.equal(code, 2, stderr);
  assert.equal(
    stderr,
    `error: agent.hcl cannot run:\n` +
      `agent.hcl:11:3: tool 'add': function "addd": the module has no export named "addd" ` +
      `(did you mean "add"?); it has: add, shout (./tools/math.js)\n`,
  );
});

Deno.test("check: a Python function the module does not define is exit 2", async () => {
  await using dir = await tempDir();
  await dir.write({
    ...TOOLS,
    "agent.hcl": manifest(
      `tool "count" {\n  kind     = "python"\n  module   = "./tools/words.py"\n  function = "cuont"\n  sandbox  = "none"\n}\n`,
    ),
  });
  const { code, stderr } = await check(dir.path);
  assert.equal(code, 2, stderr);
  assert.match(
    stderr,
    /^agent\.hcl:11:3: tool 'count': function "cuont": the module defines no function "cuont" at its top level \(did you mean "count"\?\); it has: count, re \(\.\/tools\/words\.py\)$/m,
  );
});

Deno.test("check: a missing tool file is named as written, at its module attribute", async () => {
  await using dir = await tempDir();
  await dir.write({
    "agent.hcl": manifest(
      `tool "gone" {\n  kind   = "javascript"\n  module = "./tools/gone.js"\n}\n`,
    ),
  });
  const { code, stderr } = await check(dir.path);
  assert.equal(code, 2, stderr);
  assert.equal(
    stderr,
    `error: agent.hcl cannot run:\n` +
      `agent.hcl:10:3: tool 'gone': module file not found: ./tools/gone.js (next to the manifest)\n`,
  );
  assert.ok(!stderr.includes(dir.path), "no absolute path");
});

Deno.test("check: pub/sub redis without its URL is exit 2, as serve would refuse it", async () => {
  await using dir = await tempDir();
  await dir.write({ "agent.hcl": manifest("") });
  const { code, stderr } = await check(dir.path, { AGENT__PUBSUB__KIND: "redis" });
  assert.equal(code, 2, stderr);
  assert.equal(
    stderr,
    `error: agent.hcl is not a valid manifest:\n` +
      `runtime.pubsub.url: required when kind = "redis" (redis://host:6379, rediss://host:6380, ` +
      `or an Upstash REST https:// URL with a token; or AGENT__PUBSUB__URL)\n`,
  );
});

Deno.test("check: a store kind without its URL is exit 2 at the kind's block", async () => {
  await using dir = await tempDir();
  await dir.write({
    "agent.hcl": manifest("", `runtime {\n  storage {\n    kind = "postgres"\n  }\n}\n`),
  });
  const { code, stderr } = await check(dir.path);
  assert.equal(code, 2, stderr);
  assert.equal(
    stderr,
    `error: agent.hcl is not a valid manifest:\n` +
      `agent.hcl:9:3: runtime.storage.url: required when kind = "postgres" ` +
      `(a postgres:// URL, or AGENT__STORAGE__URL)\n`,
  );
});

Deno.test("check: content errors name file:line:col of the attribute", async () => {
  await using dir = await tempDir();
  await dir.write({
    "agent.hcl": `agent {\n  name = "x"\n  modle = "gpt"\n  model {\n    provider = "echo"\n` +
      `    timeout  = "soon"\n  }\n}\n`,
  });
  const { code, stderr } = await check(dir.path);
  assert.equal(code, 2, stderr);
  const lines = stderr.trimEnd().split("\n");
  assert.equal(lines[0], "error: agent.hcl is not a valid manifest:");
  assert.ok(
    lines.includes("agent.hcl:6:5: agent.model.timeout: expected number, received string"),
    stderr,
  );
  assert.ok(
    lines.some((l) =>
      l.startsWith("agent.hcl:3:3: agent.modle: unknown attribute or block (did you mean model?)")
    ),
    stderr,
  );
});
