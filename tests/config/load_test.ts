import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { tempDir } from "../_kit/mod.ts";
import {
  ConfigError,
  DEFAULT_SQLITE_PATH,
  ENV_OVERRIDES,
  loadConfig,
  maskSecrets,
  parseConfig,
} from "../../src/config/load.ts";
import type { Config } from "../../src/config/schema.ts";

const MINIMAL = `agent {\n  name = "t"\n}\n`;

/** Parses HCL text as if it were `dir/agent.hcl`, with only the given environment. */
function hcl(text: string, env: Record<string, string> = {}, baseDir = "/srv/agent") {
  return parseConfig(text, { filename: "agent.hcl", baseDir, env });
}

/** The messages of the `ConfigError` the promise rejects with. */
async function problems(promise: Promise<Config>): Promise<string[]> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${error}`);
    return [...error.messages];
  }
  assert.fail("expected the manifest to be rejected");
}

function assertSome(lines: string[], pattern: RegExp | string): void {
  const ok = lines.some((l) => typeof pattern === "string" ? l.includes(pattern) : pattern.test(l));
  assert.ok(ok, `no line matches ${pattern}:\n${lines.join("\n")}`);
}

Deno.test("HCL blocks become objects and labelled blocks become records", async () => {
  const { manifest } = await hcl(`
agent {
  name = "calc"
  capabilities = ["math"]
  model {
    provider = "echo"
    inference_params {
      temperature = 0.5
      provider_params = { reasoning = { effort = "low" }, tags = ["a", "b"] }
    }
    retry {
      max_attempts = 3
      initial_backoff = 100
      max_backoff = 1000
    }
  }
}
capability "math" {
  description = "arithmetic"
  tools = ["add"]
}
tool "add" {
  kind = "javascript"
  module = "tools/add.ts"
  parameters = { type = "object", properties = { a = { type = "number" } }, required = ["a"] }
  permissions {
    net = ["example.com"]
  }
}
runtime {
  default_tenant_id = "acme"
  pubsub {
    capacity = 10
  }
}
http_server {
  port = 9090
  protocol {
    ag_ui {}
    a2a {
      path = "/agents/a2a"
      extension "https://example.com/ext/citations/v1" {
        required = true
        params = { style = "apa" }
      }
    }
  }
}
`);
  assert.equal(manifest.agent.model.provider, "echo");
  assert.equal(manifest.agent.model.inference_params?.temperature, 0.5);
  // Object attributes stay objects: only known block names are unwrapped.
  assert.deepEqual(manifest.agent.model.inference_params?.provider_params, {
    reasoning: { effort: "low" },
    tags: ["a", "b"],
  });
  assert.deepEqual(manifest.agent.model.retry, {
    max_attempts: 3,
    initial_backoff: 100,
    max_backoff: 1000,
  });
  assert.deepEqual(manifest.capability, {
    math: { description: "arithmetic", tools: ["add"] },
  });
  assert.deepEqual(manifest.tool.add.parameters, {
    type: "object",
    properties: { a: { type: "number" } },
    required: ["a"],
  });
  assert.deepEqual(manifest.tool.add.permissions, {
    net: ["example.com"],
    read: false,
    write: false,
    env: false,
  });
  assert.equal(manifest.runtime.default_tenant_id, "acme");
  assert.equal(manifest.runtime.pubsub.capacity, 10);
  assert.equal(manifest.http_server?.port, 9090);
  assert.deepEqual(manifest.http_server?.protocol, {
    ag_ui: { path: "/ag-ui", on_disconnect: "cancel" },
    a2a: {
      path: "/agents/a2a",
      extension: {
        "https://example.com/ext/citations/v1": { required: true, params: { style: "apa" } },
      },
    },
  });
});

Deno.test("defaults fill a minimal manifest; no http_server block stays absent", async () => {
  const { manifest, baseDir } = await hcl(MINIMAL);
  assert.equal(baseDir, "/srv/agent");
  assert.equal(manifest.agent.model.provider, "echo");
  assert.equal(manifest.agent.max_steps, 25);
  assert.equal(manifest.runtime.pubsub.kind, "memory");
  assert.equal(manifest.runtime.pubsub.capacity, 4096);
  assert.equal(manifest.http_server, undefined);
});

Deno.test("JSON manifests in normalized form load the same", async () => {
  const json = JSON.stringify({
    agent: { name: "j", model: { provider: "echo", api_key: "${env.KEY:-none}" } },
    tool: { add: { kind: "python", module: "tools/add.py", function: "add" } },
    http_server: { protocol: { a2a: {} } },
  });
  const { manifest } = await parseConfig(json, {
    filename: "agent.json",
    baseDir: "/srv/agent",
    env: {},
  });
  assert.equal(manifest.agent.name, "j");
  assert.equal(manifest.agent.model.api_key, "none");
  assert.equal(manifest.tool.add.module, "/srv/agent/tools/add.py");
  assert.deepEqual(manifest.http_server?.protocol, { a2a: { path: "/a2a", extension: {} } });
});

Deno.test("JSON in hcl2json's block-list shape is normalized too", async () => {
  const json = JSON.stringify({
    agent: [{ name: "j", model: [{ provider: "echo" }] }],
    tool: { add: [{ kind: "python", module: "/abs/add.py" }] },
  });
  const { manifest } = await parseConfig(json, { filename: "agent.json", env: {} });
  assert.equal(manifest.agent.model.provider, "echo");
  assert.equal(manifest.tool.add.module, "/abs/add.py");
});

Deno.test("${env.NAME} is replaced inside any string, also nested and unquoted", async () => {
  const { manifest } = await hcl(
    `
agent {
  name = env.AGENT_NAME
  description = "runs in \${env.REGION} for \${env.TEAM}"
  model {
    inference_params {
      provider_params = { user = "\${env.TEAM}" }
      stop_sequences = ["\${env.STOP}"]
    }
  }
}
`,
    { AGENT_NAME: "from-env", REGION: "eu", TEAM: "core", STOP: "END" },
  );
  assert.equal(manifest.agent.name, "from-env");
  assert.equal(manifest.agent.description, "runs in eu for core");
  assert.deepEqual(manifest.agent.model.inference_params?.provider_params, { user: "core" });
  assert.deepEqual(manifest.agent.model.inference_params?.stop_sequences, ["END"]);
});

Deno.test("${env.NAME:-default} uses the default when unset or empty", async () => {
  const text = `
agent {
  name = "t"
  model {
    base_url = "\${env.BASE:-https://api.openai.com/v1}"
    api_key = "\${env.KEY:-}"
  }
}
`;
  const unset = await hcl(text);
  assert.equal(unset.manifest.agent.model.base_url, "https://api.openai.com/v1");
  assert.equal(unset.manifest.agent.model.api_key, "");
  const empty = await hcl(text, { BASE: "" });
  assert.equal(empty.manifest.agent.model.base_url, "https://api.openai.com/v1");
  const set = await hcl(text, { BASE: "http://localhost:1234/v1", KEY: "k" });
  assert.equal(set.manifest.agent.model.base_url, "http://localhost:1234/v1");
  assert.equal(set.manifest.agent.model.api_key, "k");
});

Deno.test("an unset variable without default names the variable and the path", async () => {
  const lines = await problems(hcl(`
agent {
  name = "t"
  model {
    api_key = "\${env.OPENAI_API_KEY}"
  }
}
`));
  assert.equal(lines.length, 1);
  assertSome(lines, /^agent\.model\.api_key: .*OPENAI_API_KEY is not set/);
});

Deno.test("$${ is a literal ${ and other expressions are rejected", async () => {
  const { manifest } = await hcl(`
agent {
  name = "t"
  instructions = "write $\${name} and 100%%{x} literally"
}
`);
  assert.equal(manifest.agent.instructions, "write ${name} and 100%{x} literally");

  const lines = await problems(hcl(`agent {\n  name = "\${upper(env.X)}"\n}\n`, { X: "a" }));
  assertSome(lines, /^agent\.name: unsupported expression \$\{upper\(env\.X\)\}/);
});

Deno.test("a whole-string reference on a number or boolean field is coerced", async () => {
  const { manifest } = await hcl(
    `
agent {
  name = "t"
  description = "\${env.STEPS}"
  max_steps = "\${env.STEPS}"
  model {
    timeout = env.TIMEOUT
  }
}
tool "t" {
  kind = "javascript"
  module = "t.ts"
  requires_approval = "\${env.APPROVE}"
  permissions {
    net = "\${env.NET}"
  }
}
`,
    { STEPS: "7", TIMEOUT: "2500", APPROVE: "true", NET: "false" },
  );
  assert.equal(manifest.agent.max_steps, 7);
  assert.equal(manifest.agent.model.timeout, 2500);
  // A string field keeps the text.
  assert.equal(manifest.agent.description, "7");
  assert.equal(manifest.tool.t.requires_approval, true);
  assert.equal(manifest.tool.t.permissions.net, false);
});

Deno.test("coercion only applies to whole references; failures say where the value came from", async () => {
  const partial = await problems(
    hcl(`agent {\n  name = "t"\n  max_steps = "1\${env.N}"\n}\n`, { N: "0" }),
  );
  assertSome(
    partial,
    /^agent\.max_steps: expected number, received string \(value from \$\{env\.N\}\)/,
  );
  const bad = await problems(
    hcl(`agent {\n  name = "t"\n  max_steps = env.N\n}\n`, { N: "many" }),
  );
  assertSome(bad, /^agent\.max_steps: expected number, received string/);
});

Deno.test("AGENT__ overrides win over the manifest and are parsed to the field type", async () => {
  const { manifest } = await hcl(
    `
agent {
  name = "t"
  model {
    provider = "echo"
  }
}
runtime {
  pubsub {
    kind = "memory"
    capacity = 10
  }
}
http_server {
  port = 8080
}
`,
    {
      AGENT__PUBSUB__KIND: "redis",
      AGENT__PUBSUB__CAPACITY: "64",
      AGENT__PUBSUB__URL: "redis://localhost:6379",
      AGENT__PUBSUB__TOKEN: "secret",
      AGENT__MODEL__PROVIDER: "openai",
      AGENT__MODEL__API_KEY: "sk-test",
      AGENT__MODEL__TIMEOUT: "1500",
      AGENT__RUNTIME__DEFAULT_TENANT_ID: "tenant-a",
      AGENT__RUNTIME__LOG_LEVEL: "debug",
      AGENT__REPLICA__LEASE: "30000",
      AGENT__HTTP__PORT: "9999",
      AGENT__HTTP__HOST: "0.0.0.0",
      AGENT__HTTP__PUBLIC_URL: "https://agent.example.com",
      AGENT__STORAGE__SCHEMA: "agent_a",
    },
  );
  assert.equal(manifest.runtime.pubsub.kind, "redis");
  assert.equal(manifest.runtime.pubsub.capacity, 64);
  assert.equal(manifest.runtime.pubsub.url, "redis://localhost:6379");
  assert.equal(manifest.runtime.pubsub.token, "secret");
  assert.equal(manifest.agent.model.provider, "openai");
  assert.equal(manifest.agent.model.api_key, "sk-test");
  assert.equal(manifest.agent.model.timeout, 1500);
  assert.equal(manifest.runtime.default_tenant_id, "tenant-a");
  assert.equal(manifest.runtime.log_level, "debug");
  assert.equal(manifest.runtime.replica.lease, 30000);
  assert.equal(manifest.http_server?.port, 9999);
  assert.equal(manifest.http_server?.host, "0.0.0.0");
  assert.equal(manifest.http_server?.public_url, "https://agent.example.com");
  assert.equal(manifest.runtime.storage.schema, "agent_a");
});

Deno.test("AGENT__HTTP__* does not create a missing http_server block", async () => {
  const { manifest } = await hcl(MINIMAL, { AGENT__HTTP__PORT: "9999" });
  assert.equal(manifest.http_server, undefined);
});

Deno.test("a bad override value is an error naming the variable", async () => {
  const number = await problems(hcl(MINIMAL, { AGENT__PUBSUB__CAPACITY: "lots" }));
  assert.deepEqual(number, ['AGENT__PUBSUB__CAPACITY: expected an integer, got "lots"']);
  const option = await problems(hcl(MINIMAL, { AGENT__PUBSUB__KIND: "kafka" }));
  assertSome(option, /^runtime\.pubsub\.kind: .*"memory"\|"redis".*AGENT__PUBSUB__KIND/);
});

Deno.test("an unknown AGENT__ variable is an error listing the known ones", async () => {
  const lines = await problems(hcl(MINIMAL, { AGENT__PUBSUB__KINDS: "redis" }));
  assert.equal(lines.length, 1);
  assertSome(lines, "unknown environment variable AGENT__PUBSUB__KINDS");
  assertSome(lines, "did you mean AGENT__PUBSUB__KIND?");
  for (const { variable } of ENV_OVERRIDES) assertSome(lines, variable);
  // Variables outside the AGENT__ namespace are not ours to judge.
  await hcl(MINIMAL, { AGENT_FOO: "x", HOME: "/root" });
});

Deno.test("storage: default SQLite file under the working directory", async () => {
  const { manifest } = await hcl(MINIMAL);
  assert.deepEqual(manifest.runtime.storage, {
    kind: "sqlite",
    path: resolve(Deno.cwd(), DEFAULT_SQLITE_PATH),
    timeout: 5000,
  });
});

Deno.test("storage: a relative path resolves against the manifest directory", async () => {
  const text = (path: string) => `${MINIMAL}runtime {\n  storage {\n    path = "${path}"\n  }\n}\n`;
  assert.equal(
    (await hcl(text("data/agent.db"))).manifest.runtime.storage.path,
    "/srv/agent/data/agent.db",
  );
  assert.equal((await hcl(text("/var/lib/a.db"))).manifest.runtime.storage.path, "/var/lib/a.db");
  assert.equal((await hcl(text(":memory:"))).manifest.runtime.storage.path, ":memory:");
  // From the environment it is relative to the shell's directory, not the manifest's.
  const fromEnv = await hcl(MINIMAL, { AGENT__STORAGE__PATH: "x.db" });
  assert.equal(fromEnv.manifest.runtime.storage.path, resolve(Deno.cwd(), "x.db"));
});

Deno.test("storage: a postgres URL selects PostgreSQL", async () => {
  const { manifest } = await hcl(
    `${MINIMAL}runtime {\n  storage {\n    path = "dev.db"\n  }\n}\n`,
    { AGENT__STORAGE__URL: "postgresql://u:pw@db:5432/agentd" },
  );
  assert.deepEqual(manifest.runtime.storage, {
    kind: "postgres",
    url: "postgresql://u:pw@db:5432/agentd",
    timeout: 5000,
  });
  const lines = await problems(
    hcl(`${MINIMAL}runtime {\n  storage {\n    kind = "postgres"\n  }\n}\n`),
  );
  assertSome(lines, /^runtime\.storage\.url: required when kind = "postgres"/);
  const notPg = await problems(hcl(MINIMAL, { AGENT__STORAGE__URL: "mysql://u:pw@db/x" }));
  assertSome(notPg, /^runtime\.storage\.url: expected a postgres:\/\/ .*mysql:\/\/u:\*\*\*\*@db/);
});

Deno.test("tool modules resolve against the manifest directory", async () => {
  const { manifest } = await hcl(`${MINIMAL}
tool "a" {
  kind = "javascript"
  module = "./tools/a.ts"
}
tool "b" {
  kind = "javascript"
  module = "https://example.com/b.ts"
}
tool "c" {
  kind = "python"
  module = "/opt/tools/c.py"
  function = "c"
}
`);
  assert.equal(manifest.tool.a.module, "/srv/agent/tools/a.ts");
  assert.equal(manifest.tool.b.module, "https://example.com/b.ts");
  assert.equal(manifest.tool.c.module, "/opt/tools/c.py");
});

Deno.test("loadConfig reads the file and records its directory", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await Deno.mkdir(join(dir, "conf"));
  const path = join(dir, "conf", "agent.hcl");
  await Deno.writeTextFile(
    path,
    `${MINIMAL}runtime {\n  storage {\n    path = "state/a.db"\n  }\n}\n`,
  );
  const config = await loadConfig(path, {});
  assert.equal(config.baseDir, join(dir, "conf"));
  assert.equal(config.source, path);
  assert.equal(config.manifest.runtime.storage.path, join(dir, "conf", "state", "a.db"));

  const missing = await problems(loadConfig(join(dir, "nope.hcl"), {}));
  assert.deepEqual(missing, [`${join(dir, "nope.hcl")}: manifest file not found`]);
  const yaml = await problems(loadConfig(path.replace(".hcl", ".yaml"), {}));
  assertSome(yaml, "not found");
  await Deno.writeTextFile(join(dir, "agent.yaml"), "agent: {}");
  assertSome(await problems(loadConfig(join(dir, "agent.yaml"), {})), "use a .hcl or .json file");
});

Deno.test("a block given twice is an error naming it", async () => {
  const agent = await problems(hcl(`${MINIMAL}${MINIMAL}`));
  assertSome(agent, /^agent: block agent is given 2 times/);
  const model = await problems(
    hcl(`agent {\n  name = "t"\n  model {}\n  model {}\n}\n`),
  );
  assertSome(model, /^agent\.model: block agent\.model is given 2 times/);
  const tool = await problems(hcl(`${MINIMAL}
tool "add" {
  kind = "python"
  module = "a.py"
}
tool "add" {
  kind = "python"
  module = "b.py"
}
`));
  assertSome(tool, /^tool\.add: block tool "add" is given 2 times/);
  const unlabelled = await problems(hcl(`${MINIMAL}tool {\n  kind = "python"\n}\n`));
  assertSome(unlabelled, /^tool: a tool block needs a name/);
});

Deno.test("schema errors name the dotted path", async () => {
  const lines = await problems(hcl(`
agent {
  name = "t"
  colour = "blue"
}
tool "add" {
  kind = "javascript"
  module = "a.ts"
  timeout = "soon"
}
http_server {
  protocol {
    a2a { path = 42 }
  }
}
`));
  assertSome(lines, "http_server.protocol.a2a.path: expected string, received number");
  assertSome(lines, "tool.add.timeout: expected number, received string");
  assertSome(lines, /^agent\.colour: unknown attribute or block; expected one of: name, /);
  const missing = await problems(hcl(`runtime {}\n`));
  assertSome(missing, "agent: missing required block");
  const noName = await problems(hcl(`agent {\n  description = "x"\n}\n`));
  assertSome(noName, "agent.name: missing required attribute (expected string)");
  const typo = await problems(hcl(`agent {\n  name = "t"\n  max_step = 3\n}\n`));
  assertSome(typo, "agent.max_step: unknown attribute or block (did you mean max_steps?)");
});

Deno.test("HCL syntax errors are reported as file:line:col, one line each", async () => {
  const one = await problems(hcl(`agent {\n  name = \n}\n`));
  assert.equal(one.length, 1);
  assert.match(one[0], /^agent\.hcl:2:10: Invalid expression; /);
  const two = await problems(hcl(`a = "\\q"\nb = "\\z"\n`));
  assert.equal(two.length, 2);
  assert.match(two[0], /^agent\.hcl:1:6: Invalid escape sequence; /);
  assert.match(two[1], /^agent\.hcl:2:6: Invalid escape sequence; /);
  // `${env.X:-default}` is shielded from HCL, so columns after it on the line are still right.
  const shifted = await problems(hcl(`agent {\n  name = "\${env.A:-b}" x\n}\n`));
  assert.match(shifted[0], /^agent\.hcl:2:24: /);
  // The start of a range, also a range inside the detail and a range that ends on another line.
  assert.deepEqual(await problems(hcl(`agent {\n name = "x"\n`)), [
    "agent.hcl:1:7: Unclosed configuration block; There is no closing brace for this block " +
    "before the end of the file. This may be caused by incorrect brace nesting elsewhere in " +
    "this file.",
  ]);
  assert.deepEqual(await problems(hcl(`a = 1\na = 2\n`)), [
    'agent.hcl:2:1: Attribute redefined; The argument "a" was already set at agent.hcl:1:1. ' +
    "Each argument may be set only once.",
  ]);
  const unterminated = await problems(hcl(`x = <<EOT\nhello\n`));
  assert.match(unterminated[0], /^agent\.hcl:3:1: Unterminated template string; /);
});

Deno.test("JSON syntax errors carry line and column", async () => {
  const json = (text: string) => parseConfig(text, { filename: "agent.json", env: {} });
  const lines = await problems(json(`{\n  "agent": {\n    "name": }\n}\n`));
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^agent\.json:3:13: invalid JSON: /);
  const trailing = await problems(json(`{\n  "agent": {"name": "t"},\n}\n`));
  assert.match(trailing[0], /^agent\.json:3:1: /);
  const array = await problems(json(`[1]`));
  assertSome(array, "must be an object");
});

Deno.test("maskSecrets hides keys, tokens and URL passwords without touching the input", async () => {
  const config = await hcl(MINIMAL, {
    AGENT__MODEL__API_KEY: "sk-live",
    AGENT__PUBSUB__TOKEN: "tok",
    AGENT__PUBSUB__URL: "redis://:hunter2@cache:6379/0",
    AGENT__STORAGE__URL: "postgres://agent:s3cret@db/agentd",
  });
  const masked = maskSecrets(config);
  assert.equal(masked.manifest.agent.model.api_key, "****");
  assert.equal(masked.manifest.runtime.pubsub.token, "****");
  assert.equal(masked.manifest.runtime.pubsub.url, "redis://:****@cache:6379/0");
  assert.equal(masked.manifest.runtime.storage.url, "postgres://agent:****@db/agentd");
  assert.equal(config.manifest.agent.model.api_key, "sk-live");
  assert.doesNotMatch(JSON.stringify(masked), /sk-live|hunter2|s3cret|"tok"/);
});

Deno.test("every override in the table is documented in docs/configuration.md", async () => {
  const docs = await Deno.readTextFile(new URL("../../docs/configuration.md", import.meta.url));
  for (const { variable, path } of ENV_OVERRIDES) {
    const row = docs.split("\n").find((line) => line.includes(`\`${variable}\``));
    assert.ok(row, `${variable} is missing from docs/configuration.md`);
    assert.ok(row.includes(`\`${path.join(".")}\``), `${variable} row does not name its path`);
  }
});
