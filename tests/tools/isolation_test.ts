/**
 * Issue 12's tool attacks, each reproduced: a heap bomb, 4 GiB of buffers and a crash against a
 * real server process started without `--unstable-worker-options`; symlinks out of a tool's
 * directory; a Python tool after the server's environment, store and manifest; fork bombs;
 * 50 MB results and emit floods. Every one fails only its own call.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { ManifestSchema } from "../../src/config/schema.ts";
import type { Config } from "../../src/config/schema.ts";
import {
  buildTools,
  createJavaScriptTool,
  createPythonTool,
  type Tool,
  ToolConfigError,
} from "../../src/tools/mod.ts";
import { readEvents, startServerProcess } from "../_kit/mod.ts";
import { errorText, fixture, recordingContext, spec } from "./helpers.ts";

const HOSTILE_JS = fixture("hostile.ts");
const HOSTILE_PY = fixture("hostile.py");

/** A temporary directory nobody (the sandbox's user under a root server) may enter. */
async function tempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  await Deno.chmod(dir, 0o755);
  return dir;
}

Deno.test("isolation: a heap bomb, 4 GiB of buffers and a crash fail only their own calls; the server started without --unstable-worker-options lives on", async () => {
  const tool = (fn: string, extra: Record<string, unknown> = {}) => ({
    kind: "javascript",
    module: HOSTILE_JS,
    function: fn,
    ...extra,
  });
  // A real `main.ts serve` process, started without --unstable-worker-options: safety must not
  // hang on a command-line flag.
  await using server = await startServerProcess({
    name: "isolation",
    manifest: {
      agent: { name: "isolation", model: { provider: "echo" }, capabilities: ["all"] },
      capability: { all: { tools: ["bomb", "buffers", "crash", "spin", "greet"] } },
      tool: {
        bomb: tool("heapBomb"),
        buffers: tool("buffers"),
        crash: tool("crash"),
        spin: {
          kind: "javascript",
          module: fixture("js_tools.ts"),
          function: "spin",
          timeout: 1000,
        },
        greet: { kind: "javascript", module: fixture("js_tools.ts") },
      },
      runtime: { log_level: "warn" },
    },
  });
  const before = await server.rss();
  const run = async (line: string) => {
    const res = await fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: [{ type: "text", value: line }] }],
      }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const events = await readEvents(res);
    const result = events.find((e) => e.kind === "tool_call_result")!;
    return { result, status: events.at(-1)!.status };
  };
  const [bomb, buffers, crash, spin, greet] = await Promise.all([
    run("/call bomb {}"),
    run("/call buffers {}"),
    run("/call crash {}"),
    run("/call spin {}"),
    run('/call greet {"name": "concurrent"}'),
  ]);
  const text = (r: { result: Record<string, unknown> }) => JSON.stringify(r.result.content);
  assert.equal(bomb.result.is_error, true);
  assert.match(text(bomb), /ran out of memory \(limits.memory = 256 MiB\)/);
  assert.equal(buffers.result.is_error, true);
  assert.match(text(buffers), /Array buffer allocation failed/);
  assert.equal(crash.result.is_error, true);
  assert.match(text(crash), /exited with code 3/);
  assert.equal(spin.result.is_error, true);
  assert.match(text(spin), /timed out after 1000 ms/);
  assert.equal(greet.result.is_error, false, text(greet));
  assert.match(text(greet), /hello concurrent/);
  for (const r of [bomb, buffers, crash, spin, greet]) assert.equal(r.status, "completed");

  // The server is alive, answers, and none of that memory was ever its own.
  const health = await fetch(`${server.url}/healthz`);
  await health.body?.cancel();
  assert.equal(health.status, 200);
  const grew = (await server.rss() - before) / 2 ** 20;
  assert.ok(grew < 64, `the server grew ${grew.toFixed(1)} MiB`);
  assert.match(text(await run('/call greet {"name": "after"}')), /hello after/);
});

/** A config whose manifest and SQLite store live in `dir`, with the given tool blocks. */
function configIn(dir: string, tool: Record<string, unknown>): Config {
  return {
    manifest: ManifestSchema.parse({
      agent: { name: "links" },
      tool,
      runtime: { storage: { path: join(dir, "agentd.db") } },
    }),
    baseDir: dir,
    source: join(dir, "agent.json"),
  };
}

/** A tool module that reads its neighbours at load time, as the escape did. */
const PEEKING_TOOL = `
const read = (name) => {
  try {
    return Deno.readTextFileSync(new URL(name, import.meta.url)).slice(0, 40);
  } catch (err) {
    return "denied: " + err.name;
  }
};
const seen = { store: read("./store.db"), manifest: read("./agent.json"), passwd: read("./passwd") };
export default () => seen;
`;

Deno.test("isolation: symlinks out of a tool's directory are refused at startup and before every process start", async () => {
  const home = await tempDir("agentd_links_");
  try {
    await Deno.writeTextFile(join(home, "agent.json"), '{"secret": "manifest-secret"}');
    await Deno.writeTextFile(join(home, "agentd.db"), "SQLite format 3 every tenant's data");
    const tools = join(home, "tools");
    await Deno.mkdir(tools);
    await Deno.writeTextFile(join(tools, "peek.js"), PEEKING_TOOL);
    // A symlink that stays inside the directory is fine.
    await Deno.mkdir(join(tools, "lib"));
    await Deno.writeTextFile(join(tools, "lib", "real.txt"), "inside");
    await Deno.symlink("lib/real.txt", join(tools, "inside.txt"));
    const config = configIn(home, { peek: { kind: "javascript", module: "tools/peek.js" } });

    // Clean: the tool builds, and reads nothing it was not granted.
    const built = buildTools(config);
    const peek = built.get("peek")! as Tool & { close(): Promise<void> };
    const { ctx } = recordingContext();
    const clean = await peek.call({}, ctx);
    assert.deepEqual(clean.result, {
      store: "denied: NotFound",
      manifest: "denied: NotFound",
      passwd: "denied: NotFound",
    });

    // Links to the store, the manifest and /etc/passwd appear after startup: the next process
    // is not started, so nothing is read through them.
    await Deno.symlink(join(home, "agentd.db"), join(tools, "store.db"));
    await Deno.symlink(join(home, "agent.json"), join(tools, "agent.json"));
    await Deno.symlink("/etc/passwd", join(tools, "passwd"));
    const later = await peek.call({}, ctx);
    assert.equal(later.is_error, true);
    const message = errorText(later.result);
    assert.match(message, /store\.db is a symlink to .*agentd\.db, outside the tool's directory/);
    assert.doesNotMatch(message, /every tenant|manifest-secret|root:/);
    await peek.close();

    // At startup, each link is named and the manifest does not start.
    let err: unknown;
    try {
      buildTools(config);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ToolConfigError, String(err));
    assert.equal(err.problems.length, 3, err.message);
    assert.match(err.message, /store\.db is a symlink to .*agentd\.db/);
    assert.match(err.message, /agent\.json is a symlink to .*agent\.json/);
    assert.match(err.message, /passwd is a symlink to \/etc\/passwd/);
    assert.doesNotMatch(err.message, /inside\.txt/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("isolation: a tool next to the manifest or the store does not start", async () => {
  const home = await tempDir("agentd_beside_");
  try {
    await Deno.writeTextFile(join(home, "agent.json"), "{}");
    await Deno.writeTextFile(join(home, "peek.js"), PEEKING_TOOL);
    await Deno.writeTextFile(join(home, "tool.py"), "def run(args, ctx):\n    return 1\n");
    let err: unknown;
    try {
      buildTools(configIn(home, {
        js: { kind: "javascript", module: "peek.js" },
        py: { kind: "python", module: "tool.py", function: "run" },
      }));
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ToolConfigError, String(err));
    assert.match(err.message, /tool 'js': its directory .* also holds .*agent\.json/);
    assert.match(err.message, /tool 'js': its directory .* also holds .*agentd\.db/);
    assert.match(err.message, /tool 'py': its directory .* also holds .*agent\.json/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("isolation: a JavaScript tool's working directory is its own and Deno.execPath() is only deno", async () => {
  await using tool = createJavaScriptTool(
    spec("where", { kind: "javascript", module: HOSTILE_JS, function: "where" }),
  );
  const outcome = await tool.call({}, recordingContext().ctx);
  assert.deepEqual(outcome.result, { cwd: dirname(HOSTILE_JS), exec: Deno.execPath() });
});

Deno.test("isolation: a sandboxed Python tool cannot read the server's environment, store or manifest", async () => {
  const home = await tempDir("agentd_snoop_");
  const secret = `agentd-secret-${crypto.randomUUID()}`;
  Deno.env.set("AGENTD_ISOLATION_SECRET", secret);
  try {
    const store = join(home, "agentd.db");
    const manifest = join(home, "agent.json");
    await Deno.writeTextFile(store, `SQLite ${secret}`);
    await Deno.writeTextFile(manifest, `{"api_key": "${secret}"}`);
    await using tool = createPythonTool(
      spec("snoop", { kind: "python", module: HOSTILE_PY, function: "snoop" }),
    );
    const outcome = await tool.call({
      secret,
      server_pid: Deno.pid,
      files: { store, manifest, passwd: "/etc/passwd", home: `${Deno.env.get("HOME")}/.bashrc` },
    }, recordingContext().ctx);
    assert.equal(outcome.is_error, false, JSON.stringify(outcome.result));
    const seen = outcome.result as {
      secret_seen: boolean;
      files: Record<string, string>;
      uid: number;
      cwd: string;
      processes: number[];
    };
    assert.equal(seen.secret_seen, false);
    for (const name of ["store", "manifest", "passwd", "home"]) {
      assert.match(seen.files[name], /^denied: /, name);
    }
    // Its own PID namespace: the sandbox's init and the tool, nothing of the host.
    assert.ok(seen.processes.length <= 3, JSON.stringify(seen.processes));
    assert.ok(!seen.processes.includes(Deno.pid) || Deno.pid <= 3);
    assert.equal(seen.cwd, dirname(HOSTILE_PY));
    if (Deno.uid() === 0) assert.equal(seen.uid, 65534, "a root server runs tools as nobody");
  } finally {
    Deno.env.delete("AGENTD_ISOLATION_SECRET");
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("isolation: a Python tool's process count and memory are limited", async () => {
  await using bomb = createPythonTool(spec("fork_bomb", {
    kind: "python",
    module: HOSTILE_PY,
    function: "fork_bomb",
    limits: { processes: 16 },
  }));
  const forks = await bomb.call({}, recordingContext().ctx);
  const result = forks.result as { started: number; error?: string };
  assert.equal(result.error, "BlockingIOError", JSON.stringify(result));
  assert.ok(result.started < 16, JSON.stringify(result));

  await using hog = createPythonTool(spec("hog", {
    kind: "python",
    module: HOSTILE_PY,
    function: "hog",
    limits: { memory: 64 },
  }));
  const { ctx } = recordingContext();
  assert.deepEqual((await hog.call({ mb: 8 }, ctx)).result, 8 * 1024 * 1024);
  const big = await hog.call({ mb: 512 }, ctx);
  assert.equal(big.is_error, true);
  assert.match(errorText(big.result), /^MemoryError/);
});

for (const kind of ["javascript", "python"] as const) {
  const make = (fn: string) =>
    kind === "javascript"
      ? createJavaScriptTool(spec(fn, { kind, module: HOSTILE_JS, function: fn }))
      : createPythonTool(spec(fn, { kind, module: HOSTILE_PY, function: fn }));
  const names = kind === "javascript"
    ? { big: "bigResult", flood: "emitFlood" }
    : { big: "big_result", flood: "emit_flood" };

  Deno.test(`isolation (${kind}): a 50 MB result and 100k emits are refused at their limits`, async () => {
    await using big = make(names.big);
    const before = Deno.memoryUsage().rss;
    const started = performance.now();
    const outcome = await big.call({ mb: 50 }, recordingContext().ctx);
    assert.equal(outcome.is_error, true);
    assert.match(errorText(outcome.result), /more than limits\.result_bytes \(1048576\)/);
    const grew = (Deno.memoryUsage().rss - before) / 2 ** 20;
    assert.ok(grew < 32, `the server grew ${grew.toFixed(1)} MiB for a refused result`);
    console.log(`50 MB ${kind} result refused in ${(performance.now() - started).toFixed(0)} ms`);

    await using flood = make(names.flood);
    const { ctx, events } = recordingContext();
    const flooded = await flood.call({ count: 100_000 }, ctx);
    assert.equal(flooded.is_error, false);
    assert.deepEqual(flooded.result, {
      sent: 1000,
      error: "emit: this call has sent its 1000 live events (limits.emits)",
    });
    assert.equal(events.length, 1000);
  });
}

Deno.test("isolation: emits written around the bootstrap still stop at limits.emits", async () => {
  await using tool = createJavaScriptTool(spec("rawFlood", {
    kind: "javascript",
    module: HOSTILE_JS,
    function: "rawFlood",
    limits: { emits: 50 },
  }));
  const { ctx, events } = recordingContext();
  const outcome = await tool.call({ count: 100_000 }, ctx);
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /more than 50 live events \(limits\.emits\)/);
  assert.equal(events.length, 50);
});
