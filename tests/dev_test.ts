/**
 * The dev loop: `serve --watch` with a manifest and a tool file in a folder. Editing the manifest
 * changes the agent the next request sees, editing the tool's file changes the next call's result,
 * a broken edit keeps the old agent serving and prints `file:line:col`, and a stream open across
 * the reload goes on to its end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.ts";
import { loadDotEnv, startDevServer } from "../src/dev.ts";
import { startServer } from "../src/server.ts";
import { eventually, slowTest, tempDir, userText } from "./_kit/mod.ts";
import { type FakeServer, startFakeOpenAI } from "./models/fake_openai.ts";

const ROOT = join(import.meta.dirname!, "..");

function manifest(description: string): string {
  return `agent {
  name        = "dev"
  description = "${description}"
  model {
    provider = "echo"
  }
}

tool "word" {
  kind     = "javascript"
  module   = "./tools/word.js"
  function = "word"
}

runtime {
  storage {
    path = ":memory:"
  }
}

http_server {}
`;
}

const tool = (word: string) => `export function word() {\n  return "${word}";\n}\n`;

/** The manifest with `instructions` and an OpenAI model at `url` instead of echo. */
const withInstructions = (instructions: string, url: string) =>
  manifest("dev").replace(
    `  model {\n    provider = "echo"\n  }`,
    `  instructions = "${instructions}"\n  model {\n    provider = "openai"\n` +
      `    model    = "gpt-test"\n    api_key  = "sk-test-dev-loop"\n` +
      `    base_url = "${url}"\n  }`,
  );

/** Runs "hi" on `url`; the system messages the fake provider received, and the run's id. */
async function systemPrompt(url: string, fake: FakeServer): Promise<[string, string]> {
  const res = await fetch(`${url}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [userText("hi")] }),
  });
  const runId = res.headers.get("x-run-id")!;
  assert.match(await res.text(), /"status":"completed"/);
  const messages = fake.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
  return [JSON.stringify(messages.filter((m) => m.role === "system")), runId];
}

slowTest({
  name: "dev: edits take effect for the next run, a broken one keeps the old agent",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    await dir.write({ "agent.hcl": manifest("first"), "tools/word.js": tool("one") });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-prompt", "--config", join(ROOT, "deno.json"), join(ROOT, "main.ts")]
        .concat(["serve", "agent.hcl", "--watch", "--host", "127.0.0.1", "--port", "0"]),
      cwd: dir.path,
      env: { NO_COLOR: "1", AGENT__LOG__FORMAT: "json" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    let stdout = "";
    let stderr = "";
    const decoder = () => new TextDecoderStream();
    const reading = Promise.all([
      (async () => {
        for await (const text of child.stdout.pipeThrough(decoder())) stdout += text;
      })(),
      (async () => {
        for await (const text of child.stderr.pipeThrough(decoder())) stderr += text;
      })(),
    ]);
    try {
      const url = await eventually(() => /listening on (http:\S+)/.exec(stdout)?.[1], {
        timeout: 30_000,
      });
      assert.ok(url, stderr);
      const agent = async () => await (await fetch(`${url}/v1/agent`)).json();
      const run = async (text: string, params: Record<string, unknown> = {}) =>
        await fetch(`${url}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            messages: [userText(text)],
            model: { override: { inference_params: { provider_params: params } } },
          }),
        });
      const callWord = async () => await (await run("/call word {}")).text();
      assert.equal((await agent()).description, "first");
      assert.match(await callWord(), /"kind":"tool_call_result"[^\n]*"content":"one"/);

      // A stream open across the reload: a slow answer, read after the edits.
      const open = await run("a b c d e f g h i j k l m n o p", { delay_ms: 150 });
      const reader = open.body!.pipeThrough(new TextDecoderStream()).getReader();
      let rest = "";
      while (!rest.includes("text_message_content")) {
        const next = await reader.read();
        assert.ok(!next.done, rest);
        rest += next.value;
      }

      const reloads = () => (stderr.match(/"msg":"reloaded"/g) ?? []).length;
      await Deno.writeTextFile(dir.join("tools", "word.js"), tool("two"));
      await Deno.writeTextFile(dir.join("agent.hcl"), manifest("second"));
      await eventually(() => reloads() >= 1 || undefined, { timeout: 20_000 });
      await eventually(async () => (await agent()).description === "second" || undefined, {
        timeout: 20_000,
      });
      assert.match(await callWord(), /"kind":"tool_call_result"[^\n]*"content":"two"/);

      // The stream opened before the reload ends normally.
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        rest += next.value;
      }
      assert.match(rest, /"kind":"run_finished"[^\n]*"status":"completed"/, stderr);

      // A broken save: the old agent goes on, the problem is printed with its place.
      const before = reloads();
      await Deno.writeTextFile(
        dir.join("agent.hcl"),
        manifest("third").replace('function = "word"', 'function = "wrod"'),
      );
      await eventually(() => stderr.includes("reload refused") || undefined, {
        timeout: 20_000,
      });
      assert.match(
        stderr,
        /agent\.hcl:12:3: tool 'word': function "wrod": the module has no export named "wrod" \(did you mean "word"\?\)/,
      );
      assert.equal(reloads(), before);
      assert.equal((await agent()).description, "second");
      assert.match(await callWord(), /"kind":"tool_call_result"[^\n]*"content":"two"/, stderr);
    } finally {
      child.kill("SIGTERM");
      await child.status;
      clearTimeout(killer);
      await reading;
    }
    assert.match(stderr, /"msg":"stopped"/);
  },
});

Deno.test("dev: reload() refuses a broken manifest with its place and keeps serving", async () => {
  await using dir = await tempDir();
  await dir.write({ "agent.hcl": manifest("first"), "tools/word.js": tool("one") });
  const path = dir.join("agent.hcl");
  const reported: string[] = [];
  const server = await startDevServer(path, await loadConfig(path), {
    host: "127.0.0.1",
    port: 0,
    logWrite: () => {},
    report: (line) => reported.push(line),
  });
  try {
    await Deno.writeTextFile(path, manifest("second").replace("  model {", "  modle {"));
    const problems = await server.reload();
    assert.equal(problems.length, 1, problems.join("\n"));
    assert.ok(
      problems[0].startsWith(`${path}:4:3: agent.modle: unknown attribute or block`),
      problems[0],
    );
    assert.match(reported[0], /^reload refused, still serving the previous agent/);
    const agent = await (await fetch(`${server.url}/v1/agent`)).json();
    assert.equal(agent.description, "first");
    await Deno.writeTextFile(path, manifest("third"));
    assert.deepEqual(await server.reload(), []);
    assert.equal((await (await fetch(`${server.url}/v1/agent`)).json()).description, "third");
  } finally {
    await server.shutdown(0);
    await server.finished;
  }
});

Deno.test("dev: edited instructions are what the next run's model request carries", async () => {
  await using fake = startFakeOpenAI();
  await using dir = await tempDir();
  await dir.write({
    "agent.hcl": withInstructions("Answer as v1.", fake.url),
    "tools/word.js": tool("one"),
  });
  const path = dir.join("agent.hcl");
  const server = await startDevServer(path, await loadConfig(path), {
    host: "127.0.0.1",
    port: 0,
    logWrite: () => {},
    report: () => {},
  });
  const system = async () => (await systemPrompt(server.url, fake))[0];
  try {
    assert.match(await system(), /Answer as v1\./);
    await Deno.writeTextFile(path, withInstructions("Answer as v2.", fake.url));
    assert.deepEqual(await server.reload(), []);
    const next = await system();
    assert.match(next, /Answer as v2\./);
    assert.doesNotMatch(next, /v1/);
  } finally {
    await server.shutdown(0);
    await server.finished;
  }
});

Deno.test("dev: pages on localhost origins may call it by CORS, other origins may not", async () => {
  await using dir = await tempDir();
  await dir.write({ "agent.hcl": manifest("cors"), "tools/word.js": tool("one") });
  const path = dir.join("agent.hcl");
  const server = await startDevServer(path, await loadConfig(path), {
    host: "127.0.0.1",
    port: 0,
    logWrite: () => {},
    report: () => {},
  });
  const preflight = (origin: string) =>
    fetch(`${server.url}/v1/runs`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
  try {
    for (const origin of ["http://localhost:5173", "http://127.0.0.1:3000", "http://localhost"]) {
      const res = await preflight(origin);
      await res.body?.cancel();
      assert.equal(res.status, 204, origin);
      assert.equal(res.headers.get("access-control-allow-origin"), origin);
    }
    const other = await preflight("http://localhost.example.com:5173");
    await other.body?.cancel();
    assert.equal(other.headers.get("access-control-allow-origin"), null);
    const answer = await fetch(`${server.url}/v1/agent`, {
      headers: { origin: "http://localhost:5173" },
    });
    await answer.body?.cancel();
    assert.equal(answer.headers.get("access-control-allow-origin"), "http://localhost:5173");
  } finally {
    await server.shutdown(0);
    await server.finished;
  }
  // Plain `serve` (the same manifest, no --watch) keeps CORS off.
  const plain = await startServer(await loadConfig(path), {
    host: "127.0.0.1",
    port: 0,
    logWrite: () => {},
  });
  try {
    const res = await fetch(`${plain.url}/v1/runs`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:5173", "access-control-request-method": "POST" },
    });
    assert.equal(res.status, 405);
    assert.match((await res.json()).message, /CORS is off on this server/);
  } finally {
    await plain.shutdown(0);
    await plain.finished;
  }
});

Deno.test("dev: an edited .env changes what the next run's model request carries", async () => {
  await using fake = startFakeOpenAI();
  await using dir = await tempDir();
  const name = `AGENTD_DEV_TEST_TONE_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  const hcl = withInstructions(`Answer as \${env.${name}}.`, fake.url);
  await dir.write({ "agent.hcl": hcl, "tools/word.js": tool("one"), ".env": `${name}=tone-one\n` });
  const path = dir.join("agent.hcl");
  // What `serve --watch` does before it loads the manifest.
  await loadDotEnv(dir.path);
  const logs: string[] = [];
  const server = await startDevServer(path, await loadConfig(path), {
    host: "127.0.0.1",
    port: 0,
    logWrite: (line) => logs.push(line),
    report: () => {},
  });
  let lastRun = "";
  const system = async () => {
    const [prompt, runId] = await systemPrompt(server.url, fake);
    lastRun = runId;
    return prompt;
  };
  try {
    assert.match(await system(), /Answer as tone-one\./);
    // Saved by an editor: the watcher sees it and builds the agent again.
    await Deno.writeTextFile(dir.join(".env"), `# edited\n${name}="tone-two"\n`);
    await eventually(() => logs.some((line) => line.includes('"reloaded"')) || undefined, {
      timeout: 20_000,
    });
    const next = await system();
    assert.match(next, /Answer as tone-two\./);
    assert.doesNotMatch(next, /tone-one/);
    // The dev loop records model requests (runtime.record_model_requests unset in the manifest).
    const steps = await (await fetch(`${server.url}/v1/runs/${lastRun}/steps`)).json();
    assert.equal(steps.data[0].request.headers.authorization, "****");
    assert.match(JSON.stringify(steps.data[0].request.body), /Answer as tone-/);
  } finally {
    Deno.env.delete(name);
    await server.shutdown(0);
    await server.finished;
  }
});
