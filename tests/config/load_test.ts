/**
 * The loading pipeline end to end (`src/config/load.ts`): reading a file, picking the format,
 * running every step in order and reporting what they found together.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../_kit/mod.ts";
import { loadConfig, parseConfig } from "../../src/config/load.ts";
import { assertSome, hcl, MINIMAL, problems } from "./helpers.ts";

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

Deno.test("a byte order mark is skipped and the extension picks the format in any case", async () => {
  const json = await parseConfig(`\uFEFF{"agent": {"name": "j"}}`, { filename: "A.JSON", env: {} });
  assert.equal(json.manifest.agent.name, "j");
  const text = await hcl(`\uFEFF${MINIMAL}`);
  assert.equal(text.manifest.agent.name, "t");
});

Deno.test("the steps before validation report their problems together, and validation waits", async () => {
  const lines = await problems(hcl(
    `agent {\n  name = "\${env.NAME}"\n  colour = "blue"\n}\ntool {\n  kind = "python"\n}\n`,
    { AGENT__PUBSUB__CAPACITY: "lots" },
  ));
  assert.equal(lines.length, 3);
  assertSome(lines, /^tool: a tool block needs a name/);
  assertSome(lines, /^agent\.name: environment variable NAME is not set/);
  assertSome(lines, /^AGENT__PUBSUB__CAPACITY: expected an integer/);
  // `colour` is a validation problem: reported only once the earlier steps pass.
  assert.ok(!lines.some((line) => line.includes("colour")));
});
