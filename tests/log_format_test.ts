/**
 * The two log formats of a real `main.ts serve` process: the line for people when stderr is a
 * terminal (run under a pseudo-terminal with `script`), JSON when it is not; in both, the start-up
 * steps, a failed run at `warn` with its message, a failed tool call, and `stopped` at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServerProcess, tempDir } from "./_kit/mod.ts";

const ROOT = join(import.meta.dirname!, "..");

/** A manifest whose model cannot be reached (a failed run) and a tool that always fails. */
async function writeManifest(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "tools"));
  await Deno.writeTextFile(
    join(dir, "tools", "broken.js"),
    `export function run() { throw new Error("the disk is full"); }\n`,
  );
  const path = join(dir, "agent.json");
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      agent: {
        name: "logs",
        instructions: "Be brief.",
        model: {
          provider: "openai-compatible",
          model: "nobody",
          // Port 1 of the loopback: refused at once, so the run fails fast.
          base_url: "http://127.0.0.1:1/v1",
          api_key: "sk-test-key-that-must-not-be-logged-0123",
          retry: { max_attempts: 1, initial_backoff: 0, max_backoff: 0 },
        },
      },
      tool: {
        broken: {
          description: "Always fails.",
          kind: "javascript",
          module: "./tools/broken.js",
          function: "run",
          parameters: { type: "object", properties: {} },
        },
      },
      runtime: { storage: { path: ":memory:" } },
      http_server: {},
    }),
  );
  return path;
}

const userMessage = (text: string) => ({
  messages: [{ role: "user", content: [{ type: "text", value: text }] }],
});

/** A run that fails (the model is unreachable), and one whose tool call fails (echo model). */
async function failRunAndTool(url: string): Promise<void> {
  // An attached run: its stream ends with the run.
  const run = async (body: unknown) => {
    const response = await fetch(`${url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    return await response.text();
  };
  assert.match(await run(userMessage("hello")), /"status":"failed"/);
  const tool = await run({
    ...userMessage("/call broken {}"),
    model: { override: { provider: "echo" } },
  });
  assert.match(tool, /"status":"completed"/);
}

Deno.test("on a terminal, logs are lines for people; a failed run warns with its message", async () => {
  await using dir = await tempDir();
  const manifest = await writeManifest(dir.path);
  const serve = [Deno.execPath(), "run", "-A", "--no-prompt", "--config", join(ROOT, "deno.json")]
    .concat([join(ROOT, "main.ts"), "serve", manifest, "--host", "127.0.0.1", "--port", "0"]);
  // `script` runs the server on a pseudo-terminal (stdin, stdout and stderr) and copies what it
  // writes to our pipe; a Ctrl-C written to its input is the terminal's SIGINT.
  const child = new Deno.Command("script", {
    args: ["-qfec", `exec ${serve.map((a) => `'${a}'`).join(" ")}`, "/dev/null"],
    cwd: dir.path,
    env: { TERM: "xterm", AGENTD_NO_UPDATE: "1" },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const decoder = new TextDecoder();
  let output = "";
  const listening = Promise.withResolvers<string>();
  const reading = (async () => {
    for await (const chunk of child.stdout) {
      output += decoder.decode(chunk, { stream: true });
      const url = /listening on (http:\S+)/.exec(output)?.[1];
      if (url) listening.resolve(url);
    }
    listening.reject(new Error(`the server exited before listening:\n${output}`));
  })();
  const url = await listening.promise;
  await failRunAndTool(url);
  const stdin = child.stdin.getWriter();
  await stdin.write(new Uint8Array([3]));
  const status = await child.status;
  clearTimeout(killer);
  await reading;
  await stdin.close().catch(() => {});
  await child.stderr.cancel();
  assert.equal(status.code, 0, output);

  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "").split(/\r?\n/);
  const line = (pattern: RegExp) => {
    const hit = plain.find((l) => pattern.test(l));
    assert.ok(hit, `no line matches ${pattern} in:\n${plain.join("\n")}`);
    return hit;
  };
  assert.ok(output.includes("\x1b[36mINFO"), "the level is coloured on a terminal");
  assert.ok(!plain.some((l) => l.startsWith("{")), "no JSON line on a terminal");
  line(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}opening store store=sqlite at=:memory:$/);
  line(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}migrations applied migrations=0001_initial,/);
  line(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening url=http:\/\/127\.0\.0\.1:\d+ store=sqlite /);
  line(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}starting tool processes tools=broken$/);
  line(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}request POST \/v1\/runs 200 [\d.]+ms tenant=default$/);
  const failed = line(/ WARN {2}run finished .*status=failed/);
  assert.match(failed, /error_code=model_connection error=".+"/);
  assert.ok(!failed.includes("request_id="), "every line's ids are left out");
  line(/ WARN {2}tool failed .*tool=broken .*error=".*the disk is full/);
  line(/ INFO {2}shutting down grace_ms=10000 active_runs=0$/);
  line(/ INFO {2}stopped$/);
  assert.ok(!output.includes("sk-test-key-that-must-not-be-logged"), "the key stays out");
});

Deno.test("off a terminal, logs are JSON; the failed run's line carries its message", async () => {
  await using dir = await tempDir();
  await using server = await startServerProcess({ manifest: await writeManifest(dir.path) });
  await failRunAndTool(server.url);
  const status = await server.stop();
  assert.equal(status.code, 0);
  const records = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  const find = (msg: string, level: string) => {
    const hit = records.find((r) => r.msg === msg && r.level === level);
    assert.ok(hit, `no ${level} "${msg}" in:\n${server.logs.join("\n")}`);
    return hit;
  };
  const failed = records.find((r) => r.msg === "run finished" && r.status === "failed");
  assert.ok(failed, server.logs.join("\n"));
  assert.equal(failed.level, "warn");
  assert.equal(failed.error_code, "model_connection");
  assert.equal(typeof failed.error, "string");
  assert.ok((failed.error as string).length > 0);
  const tool = find("tool failed", "warn");
  assert.equal(tool.tool, "broken");
  assert.match(String(tool.error), /the disk is full/);
  assert.deepEqual(find("opening store", "info").at, ":memory:");
  find("stopped", "info");
  assert.equal(records.at(-1)?.msg, "stopped", "stopped is the last line");
  assert.ok(!server.logs.join("\n").includes("sk-test-key-that-must-not-be-logged"));
});

Deno.test("--log-format and AGENT__LOG__FORMAT choose the format", async () => {
  await using dir = await tempDir();
  const manifest = await writeManifest(dir.path);
  await using text = await startServerProcess({
    manifest,
    env: { AGENT__LOG__FORMAT: "text", NO_COLOR: "1" },
  });
  assert.match(text.logs.find((l) => l.includes("listening")) ?? "", /^\d\d:\d\d:\d\d\.\d{3} INFO/);
  assert.ok(!text.logs.join("\n").includes("\x1b["), "no colours off a terminal");
  const bad = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", join(ROOT, "deno.json"), join(ROOT, "main.ts")]
      .concat(["serve", manifest, "--log-format", "yaml"]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(bad.code, 2);
  assert.match(
    new TextDecoder().decode(bad.stderr),
    /error: --log-format expects one of auto, text, json, got "yaml"/,
  );
});
