import assert from "node:assert/strict";
import { join } from "node:path";
import denoConfig from "../deno.json" with { type: "json" };
import { tempDir } from "./_kit/mod.ts";

const ROOT = join(import.meta.dirname!, "..");
const MAIN = join(ROOT, "main.ts");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno run -A main.ts ...args` in `cwd` with `childEnv(env)`. */
async function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Result> {
  const output = await new Deno.Command(Deno.execPath(), {
    // --config: the subprocess runs from a temp directory, where deno.json would not be found.
    args: ["run", "-A", "--config", join(ROOT, "deno.json"), MAIN, ...args],
    cwd,
    env: childEnv(env),
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** The caller's environment without `AGENT__*` (they would apply as overrides), plus `extra`. */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const base = Object.entries(Deno.env.toObject()).filter(([k]) => !k.startsWith("AGENT__"));
  return { ...Object.fromEntries(base), NO_COLOR: "1", ...extra };
}

function assertNoStack(result: Result): void {
  assert.doesNotMatch(result.stderr, /^\s+at /m, `stack trace in stderr:\n${result.stderr}`);
}

const GOOD = `
agent {
  name = "cli"
  model {
    provider = "openai"
    api_key = "\${env.CLI_TEST_KEY}"
  }
}
runtime {
  pubsub {
    url = "redis://:hunter2@cache:6379"
  }
}
http_server {
  port = 8080
  protocol {
    a2a {}
  }
}
`;

Deno.test("cli: --help prints the usage of every command and flag", async () => {
  const result = await cli(["--help"], ROOT);
  assert.equal(result.code, 0);
  for (const word of ["serve", "check", "--host", "--port", "--help", "--version", "MANIFEST"]) {
    assert.ok(result.stdout.includes(word), `--help does not mention ${word}`);
  }
  const sub = await cli(["serve", "--help"], ROOT);
  assert.equal(sub.code, 0);
  assert.ok(sub.stdout.includes("Usage:"));
});

Deno.test("cli: --version prints the version from deno.json", async () => {
  const result = await cli(["--version"], ROOT);
  assert.equal(result.code, 0);
  assert.equal(result.stdout.trim(), denoConfig.version);
});

Deno.test("cli: check on a good manifest prints the resolved configuration, secrets masked", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": GOOD });
  const dir = tmp.path;
  const result = await cli(["check", "agent.hcl"], dir, { CLI_TEST_KEY: "sk-very-secret" });
  assert.equal(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout);
  assert.equal(printed.manifest.agent.name, "cli");
  assert.equal(printed.manifest.agent.model.api_key, "****");
  assert.equal(printed.manifest.runtime.pubsub.url, "redis://:****@cache:6379");
  assert.equal(printed.manifest.runtime.storage.kind, "sqlite");
  assert.equal(printed.manifest.http_server.protocol.a2a.path, "/a2a");
  assert.equal(printed.baseDir, await Deno.realPath(dir));
  assert.doesNotMatch(result.stdout, /sk-very-secret|hunter2/);
});

Deno.test("cli: check reports syntax errors as file:line:col and exits 2", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": `agent {\n  name = \n}\n` });
  const dir = tmp.path;
  const result = await cli(["check", "agent.hcl"], dir);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /agent\.hcl:2:10: Invalid expression/);
  assert.equal(result.stdout, "");
  assertNoStack(result);
});

Deno.test("cli: check reports schema errors with dotted paths and exits 2", async () => {
  const text =
    `agent {\n  name = "x"\n}\nhttp_server {\n  protocol {\n    a2a {\n      path = 5\n    }\n  }\n}\n`;
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": text });
  const dir = tmp.path;
  const result = await cli(["check", "agent.hcl"], dir);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /http_server\.protocol\.a2a\.path: expected string, received number/,
  );
  assertNoStack(result);
});

Deno.test("cli: check on a missing file, an unset variable or a bad override exits 2", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": GOOD });
  const dir = tmp.path;
  const missing = await cli(["check", "nope.hcl"], dir);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nope\.hcl: manifest file not found/);
  assertNoStack(missing);

  const unset = await cli(["check", "agent.hcl"], dir);
  assert.equal(unset.code, 2);
  assert.match(
    unset.stderr,
    /agent\.model\.api_key: environment variable CLI_TEST_KEY is not set/,
  );

  const override = await cli(["check"], dir, {
    CLI_TEST_KEY: "k",
    AGENT__PUBSUB__CAPACITY: "big",
    AGENT__PUBSUB__KINDS: "redis",
  });
  assert.equal(override.code, 2);
  assert.match(override.stderr, /AGENT__PUBSUB__CAPACITY: expected an integer/);
  assert.match(override.stderr, /unknown environment variable AGENT__PUBSUB__KINDS/);
  assertNoStack(override);
});

Deno.test("cli: serve refuses a manifest without http_server and exits 2", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": `agent {\n  name = "x"\n}\n` });
  const dir = tmp.path;
  const result = await cli(["serve", "agent.hcl"], dir);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /native HTTP API \(\/v1\) exists only when the manifest has an http_server block/,
  );
  assert.match(result.stderr, /http_server \{/);
  assertNoStack(result);
});

Deno.test("cli: usage mistakes exit 2 without a stack trace", async () => {
  for (
    const args of [
      ["frobnicate"],
      [],
      ["serve", "--port", "http"],
      ["serve", "--port"],
      ["serve", "--verbose"],
      ["check", "--host", "x"],
      ["check", "a.hcl", "b.hcl"],
    ]
  ) {
    const result = await cli(args, ROOT);
    assert.equal(result.code, 2, `agentd ${args.join(" ")} exited ${result.code}`);
    assert.ok(result.stderr.length > 0, `agentd ${args.join(" ")} printed nothing`);
    assertNoStack(result);
  }
  const unknown = await cli(["frobnicate"], ROOT);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  const said: [string[], RegExp][] = [
    [["serve", "--port"], /option --port needs a value/],
    [["serve", "--port", "--host", "x"], /option --port needs a value/],
    [["serve", "--verbose"], /unknown option --verbose for serve/],
    [["check", "--host", "x"], /unknown option --host for check/],
    [["--host", "x", "serve"], /unknown option --host\n/],
    [["--help=yes"], /option --help takes no value/],
  ];
  for (const [args, message] of said) {
    const result = await cli(args, ROOT);
    assert.equal(result.code, 2);
    assert.match(result.stderr, message, `agentd ${args.join(" ")}`);
    assert.match(result.stderr, /Run "agentd --help" for usage/);
  }
});

Deno.test("cli: serve listens where --host/--port say and stops cleanly on SIGTERM", async () => {
  const manifest =
    `agent {\n  name = "s"\n}\nruntime {\n  storage {\n    path = ":memory:"\n  }\n}\n` +
    `http_server {\n  port = 8080\n}\n`;
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": manifest });
  const dir = tmp.path;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      join(ROOT, "deno.json"),
      MAIN,
      "serve",
      "agent.hcl",
      "--host",
      "127.0.0.1",
      "--port=0",
    ],
    cwd: dir,
    env: childEnv(),
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: string | undefined;
  try {
    const deadline = Date.now() + 20_000;
    while (!url && Date.now() < deadline) {
      const { value, done } = await lines.read();
      if (done) break;
      seen += value;
      url = /"url":"(http:\/\/127\.0\.0\.1:(\d+))"/.exec(seen)?.[1];
    }
    assert.ok(url, `serve did not report a URL:\n${seen}`);
    // --port 0 won over the manifest's 8080.
    assert.notEqual(new URL(url).port, "8080");
    const response = await fetch(`${url}/v1/runs/does-not-exist`);
    await response.body?.cancel();
    assert.equal(response.status, 404);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited: the assertions above say why.
    }
    // Drain stderr so the process is not blocked on a full pipe while it shuts down.
    for (;;) {
      const { done } = await lines.read();
      if (done) break;
    }
  }
  const status = await child.status;
  assert.equal(status.code, 0);
});

Deno.test("check and serve report runtime problems: missing tool module, unknown provider", async () => {
  await using dir = await tempDir();
  const path = dir.join("agent.hcl");
  await Deno.writeTextFile(
    path,
    `agent {
  name = "x"
  model { provider = "nope" }
}
tool "missing" {
  kind   = "javascript"
  module = "tools/missing.ts"
}
http_server {}
`,
  );
  for (const command of ["check", "serve"]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-prompt", "main.ts", command, path, "--port", "0"].slice(
        0,
        command === "check" ? 6 : 8,
      ),
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(stderr, /tool 'missing': module file not found/);
    assert.match(stderr, /agent\.model\.provider/);
    assert.doesNotMatch(stderr, /^\s+at /m);
  }
});

Deno.test("check warns about a python tool without its OS sandbox, and refuses sandboxed ones on a host without bwrap", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agentd_cli_" });
  try {
    await Deno.mkdir(join(dir, "tools"));
    await Deno.writeTextFile(join(dir, "tools", "t.py"), "def run(args, ctx):\n    return 1\n");
    const tool = (name: string, extra: string) =>
      `tool "${name}" {\n  kind = "python"\n  module = "tools/t.py"\n  function = "run"\n${extra}}\n`;
    await Deno.writeTextFile(
      join(dir, "agent.hcl"),
      `agent {\n  name = "s"\n}\n` + tool("open", '  sandbox = "none"\n') + tool("boxed", ""),
    );
    const ok = await cli(["check", "agent.hcl"], dir);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stderr,
      /warning: tool 'open': sandbox = "none": it runs without the OS sandbox/,
    );
    assert.doesNotMatch(ok.stderr, /tool 'boxed'/);

    // A PATH without bwrap: the sandboxed tool is refused with the reason, the other one is not.
    const bare = await cli(["check", "agent.hcl"], dir, { PATH: "/nonexistent" });
    assert.equal(bare.code, 2, bare.stderr);
    assert.match(
      bare.stderr,
      /tool 'boxed': python tools run in an OS sandbox, which this host cannot provide: bubblewrap \(bwrap\) is not installed/,
    );
    assert.match(bare.stderr, /sandbox = "none"/);
    assert.doesNotMatch(bare.stderr, /tool 'open': python tools run/);
    assertNoStack(bare);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: serve names an unreachable store, its masked URL and what to check; exit 1", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({ "agent.hcl": `agent {\n  name = "s"\n}\nhttp_server {}\n` });
  // Nothing listens on a port just freed.
  const port = freePort();
  const result = await cli(["serve", "agent.hcl", "--port", "0"], tmp.path, {
    AGENT__STORAGE__URL: `postgres://agent:hunter22secret@127.0.0.1:${port}/agentd`,
    AGENT__STORAGE__TIMEOUT: "2000",
  });
  assert.equal(result.code, 1, result.stderr);
  assertNoStack(result);
  assert.match(
    result.stderr,
    new RegExp(
      `error: could not open the postgres store at postgres://agent:\\*\\*\\*\\*@127\\.0\\.0\\.1:${port}/agentd: .+; check that PostgreSQL runs and accepts connections there`,
    ),
  );
  assert.ok(!result.stderr.includes("hunter22secret"), result.stderr);
});

Deno.test("cli: serve on a port in use suggests --port; exit 1", async () => {
  await using tmp = await tempDir("agentd_cli_");
  await tmp.write({
    "agent.hcl":
      `agent {\n  name = "s"\n}\nruntime {\n  storage {\n    path = ":memory:"\n  }\n}\nhttp_server {}\n`,
  });
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (taken.addr as Deno.NetAddr).port;
  const result = await cli(
    ["serve", "agent.hcl", "--host", "127.0.0.1", "--port", `${port}`],
    tmp.path,
  );
  assert.equal(result.code, 1, result.stderr);
  assertNoStack(result);
  assert.match(result.stderr, /error: the address is already in use: /);
  assert.match(
    result.stderr,
    /choose another port with --port \(e\.g\. --port 8081; --port 0 picks a free one\)/,
  );
});

/** A loopback port nothing listens on (taken and released at once). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
