/**
 * Packaging: `deno task compile` must produce one executable that needs no file of this
 * repository at run time. `deno compile` embeds the static module graph (migrations are TypeScript
 * modules imported statically, the playground's files and the tool processes' code are imported
 * as text: a JS tool's sandbox process runs its bootstrap given as a `data:` URL, the Python runner
 * is passed with `python3 -c`) and the npm packages of the graph, whole (so `@cdktn/hcl2json` finds
 * its `main.wasm.gz`). These
 * tests keep it that way:
 *
 * - no source reads a file, resolves `import.meta.url` or imports a computed specifier at run time,
 *   except the allowlisted reads of user files (the manifest, tool modules);
 * - what the compiled program reads is in the module graph, or in the task's `--include` list;
 * - the compile task itself runs (its embedding step, with this deno standing in for the runtime
 *   binary it cannot download here) and embeds what we expect;
 * - `main.ts check` works from another working directory.
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import denoConfig from "../deno.json" with { type: "json" };
import { JS_HOST_SOURCE, JS_HOST_URL } from "../src/tools/host/sources.ts";
import { CHECKPOINTER_SOURCE, CHECKPOINTER_URL } from "../src/store/sqlite/checkpointer.ts";
import { slowTest, tempDir } from "./_kit/mod.ts";

const ROOT = dirname(dirname(fromFileUrl(import.meta.url)));

/** Run-time file access that `deno compile` cannot see, with what it looks like in source. */
const PATTERNS: { name: string; re: RegExp }[] = [
  { name: "Deno file read", re: /\bDeno\.(readTextFile|readFile|open|readDir)(Sync)?\s*\(/g },
  { name: "Deno.stat", re: /\bDeno\.(stat|lstat)(Sync)?\s*\(/g },
  {
    name: "node:fs read",
    re: /\b(readFileSync|readFile|createReadStream|readdirSync|readdir)\s*\(/g,
  },
  { name: "import.meta path", re: /\bimport\.meta\.(url|dirname|filename|resolve)\b/g },
  { name: "new Worker", re: /\bnew Worker\s*\(/g },
  // A dynamic import whose specifier is not a string literal is invisible to the module graph.
  { name: "computed import", re: /\bimport\s*\(\s*(?!["'][^"'`$]*["']\s*\))/g },
];

/** Reviewed exceptions: each reads a user's file (never one of ours), or is safe as explained. */
const ALLOWED: { file: string; name: string; why: string }[] = [
  {
    file: "src/config/load.ts",
    name: "Deno file read",
    why: "the manifest, a user file named on the command line",
  },
  {
    file: "src/tools/mod.ts",
    name: "Deno.stat",
    why: "checks that a manifest tool module (a user file) exists",
  },
  {
    file: "src/tools/mod.ts",
    name: "Deno file read",
    why: "reads a manifest tool module (a user file) for the export its block names",
  },
  {
    file: "src/dev.ts",
    name: "Deno file read",
    why: "reads the manifest and the .env beside it (user files) when `serve --watch` reloads",
  },
  {
    file: "main.ts",
    name: "Deno file read",
    why: "reads the manifest again (a user file) to place `check`'s messages at file:line:col",
  },
  {
    file: "src/tools/host/js_host.ts",
    name: "computed import",
    why: "the tool process's bootstrap (embedded as text) imports the user's tool module; " +
      "docs/deploy.md says what a compiled binary can load",
  },
  {
    file: "src/tools/checks.ts",
    name: "Deno file read",
    why: "lists a tool's directory (a user directory) for symlinks leading out of it",
  },
  {
    file: "src/tools/javascript_tool.ts",
    name: "Deno.stat",
    why: "looks for the deno binary on PATH (a compiled agentd)",
  },
  {
    file: "src/tools/sandbox.ts",
    name: "Deno.stat",
    why: "looks for bwrap/setpriv on PATH and at the host's system directories",
  },
  {
    file: "src/tools/python_tool.ts",
    name: "Deno.stat",
    why: "checks that the configured Python interpreter exists",
  },
  {
    file: "src/http/open_files.ts",
    name: "Deno file read",
    why: "reads /proc/self/limits (the open-files limit), the kernel's file, not one of ours",
  },
  {
    file: "src/store/sqlite/checkpointer.ts",
    name: "new Worker",
    why: "started from CHECKPOINTER_URL, a data: URL (checked below), nothing to include",
  },
];

async function sourceFiles(dir: string, names = /\.(ts|tsx|js|mjs)$/): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await sourceFiles(path, names));
    else if (names.test(entry.name)) out.push(path);
  }
  return out;
}

/** What the playground serves: code, page, stylesheet and icon (imported as text). */
const PLAYGROUND_FILES = /\.(ts|js|html|css|svg)$/;

/** Strips `//` line comments and JSDoc/block comments, so prose mentioning an API is not a hit. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

async function denoJson(args: string[], cwd = ROOT): Promise<unknown> {
  const out = await new Deno.Command(Deno.execPath(), { args, cwd, stdout: "piped" }).output();
  assert.ok(out.success, `deno ${args.join(" ")} failed`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

interface Graph {
  modules: { specifier: string }[];
  npmPackages: Record<string, { name: string; localPath?: string }>;
}

/** The compile task's arguments after `deno compile`. */
function compileArgs(): string[] {
  const task = (denoConfig.tasks as Record<string, string>).compile;
  assert.ok(task, "deno.json has a compile task");
  const words = task.trim().split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "compile"], task);
  return words.slice(2);
}

function flagValues(args: string[], flag: string): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if (a === flag) out.push(args[i + 1]);
    else if (a.startsWith(`${flag}=`)) out.push(a.slice(flag.length + 1));
  });
  return out;
}

Deno.test("no run-time read of repository files outside the allowlist", async () => {
  const files = [join(ROOT, "main.ts"), ...await sourceFiles(join(ROOT, "src"))];
  const hits: string[] = [];
  const used = new Set<(typeof ALLOWED)[number]>();
  for (const path of files) {
    const file = relative(ROOT, path);
    const text = code(await Deno.readTextFile(path));
    for (const { name, re } of PATTERNS) {
      for (const m of text.matchAll(re)) {
        const allowed = ALLOWED.find((a) => a.file === file && a.name === name);
        if (allowed) {
          used.add(allowed);
          continue;
        }
        const line = text.slice(0, m.index).split("\n").length;
        hits.push(`${file}:${line}: ${name}: ${m[0]}`);
      }
    }
  }
  assert.deepEqual(hits, [], "read through a static import or add --include (and the allowlist)");
  const stale = ALLOWED.filter((a) => !used.has(a)).map((a) => `${a.file}: ${a.name}`);
  assert.deepEqual(stale, [], "allowlist entries that no longer match anything");
});

// The tool process's bootstrap runs in the `deno` CLI, which transpiles TypeScript; the checkpoint
// worker runs inside a compiled agentd, which loads data: URLs as plain JavaScript.
for (
  const [name, url, source, mediaType] of [
    ["the JS tool process's bootstrap", JS_HOST_URL, JS_HOST_SOURCE, "application/typescript"],
    ["the SQLite checkpoint worker", CHECKPOINTER_URL, CHECKPOINTER_SOURCE, "text/javascript"],
  ]
) {
  Deno.test(`${name} is a data: URL (nothing to include in a binary)`, () => {
    assert.ok(url.startsWith(`data:${mediaType};base64,`));
    const decoded = new TextDecoder().decode(
      Uint8Array.from(atob(url.split(",")[1]), (c) => c.charCodeAt(0)),
    );
    assert.equal(decoded, source);
    // A data: module cannot resolve relative imports: the bootstrap must be self-contained.
    assert.doesNotMatch(decoded, /^\s*import\s[^(]/m, "no static import in the bootstrap");
    assert.doesNotMatch(decoded, /^\s*export\s/m);
    if (mediaType === "text/javascript") {
      new Function(`return async () => {${decoded.replace(/^"use strict";/, "")}}`);
    }
  });
}

Deno.test("what the program loads is in the module graph or in --include", async () => {
  const graph = await denoJson(["info", "--json", "main.ts"]) as Graph;
  const local = new Set(
    graph.modules.map((m) => m.specifier).filter((s) => s.startsWith("file:")).map((s) =>
      relative(ROOT, fromFileUrl(s))
    ),
  );
  const includes = flagValues(compileArgs(), "--include");
  const covered = (file: string) =>
    local.has(file) || includes.some((inc) => file === inc || file.startsWith(inc + "/"));

  // Assets kept as modules: every migration, the tool bootstrap and runner sources, the playground.
  const expected = [
    "deno.json",
    "src/tools/host/js_host.ts",
    "src/tools/host/python_runner.py",
  ];
  for (const f of await sourceFiles(join(ROOT, "src/store/migrations"))) {
    expected.push(relative(ROOT, f));
  }
  const playground = await sourceFiles(join(ROOT, "src/http/playground"), PLAYGROUND_FILES);
  assert.ok(playground.some((f) => f.endsWith("static/index.html")), "the page is a file");
  for (const f of playground) expected.push(relative(ROOT, f));
  const missing = expected.filter((f) => !covered(f));
  assert.deepEqual(missing, [], "import these statically (or add them to --include)");

  // Every --include names something that exists (deno compile fails on a missing one).
  for (const inc of includes) {
    assert.ok(await Deno.stat(join(ROOT, inc)).catch(() => null), `--include ${inc} exists`);
  }

  // hcl2json reads main.wasm.gz next to its code with fs at run time: deno compile embeds the
  // npm packages of the graph as whole folders, so the file must be in the package.
  const hcl = Object.values(graph.npmPackages).find((p) => p.name === "@cdktn/hcl2json");
  assert.ok(hcl?.localPath, "@cdktn/hcl2json is in the graph");
  assert.ok((await Deno.stat(join(hcl.localPath, "main.wasm.gz"))).isFile);
});

slowTest("the compile task embeds the graph (runtime binary stood in by this deno)", async () => {
  // `deno compile` downloads its runtime (denort), which our machines cannot; DENORT_BIN points
  // it at a local binary instead. With deno itself the result does not run as agentd, but every
  // step before that runs for real: flags, graph, includes, npm embedding, and the listing.
  const args = compileArgs();
  const out = flagValues(args, "--output");
  assert.deepEqual(out, ["dist/agentd"]);
  // Tools run in processes, not Workers with permissions: no unstable flag is needed (issue 12).
  assert.ok(!args.some((a) => a.startsWith("--unstable")), "no unstable API is needed");
  assert.equal(args.at(-1), "main.ts");
  await using tmp = await tempDir("agentd_compile_");
  const dir = tmp.path;
  const argv = args.map((a, i) => (args[i - 1] === "--output" ? join(dir, "agentd") : a));
  const result = await new Deno.Command(Deno.execPath(), {
    // Type checking is `deno check`'s job; here it would only double the time.
    args: ["compile", "--no-check", ...argv],
    cwd: ROOT,
    env: { DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
  assert.ok(result.success, text);
  const listing = text.slice(text.indexOf("Embedded Files"));
  const parts = ["main.ts", "deno.json", "migrations", "@cdktn/hcl2json", "postgres"];
  // The playground's files, imported as text, are embedded like modules.
  parts.push("index.html", "style.css", "favicon.svg", "app.js", "sse.js");
  for (const part of parts) {
    assert.ok(listing.includes(part), `${part} is embedded:\n${listing}`);
  }
  // Test-only packages stay out (--exclude-unused-npm).
  for (const part of ["playwright-core", "@ag-ui/client"]) {
    assert.ok(!listing.includes(part), `${part} is not embedded:\n${listing}`);
  }
});

Deno.test("main.ts check works from another working directory", async () => {
  await using tmp = await tempDir("agentd_cwd_");
  const cwd = tmp.path;
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-prompt",
      join(ROOT, "main.ts"),
      "check",
      join(ROOT, "examples/quickstart/agent.hcl"),
    ],
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(result.stderr);
  assert.equal(result.code, 0, stderr);
  const config = JSON.parse(new TextDecoder().decode(result.stdout));
  assert.equal(config.manifest.agent.name, "quickstart");
  for (const tool of Object.values(config.manifest.tool) as { module: string }[]) {
    assert.ok(tool.module.startsWith(join(ROOT, "examples/quickstart/")), tool.module);
  }
});
