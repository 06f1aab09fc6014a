/** `AGENT__*` environment overrides (`src/config/overrides.ts`), through the loader and alone. */
import assert from "node:assert/strict";
import { applyOverrides, ENV_OVERRIDES } from "../../src/config/overrides.ts";
import { assertSome, hcl, MINIMAL, problems } from "./helpers.ts";

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

Deno.test("every override in the table is documented in docs/configuration.md", async () => {
  const docs = await Deno.readTextFile(new URL("../../docs/configuration.md", import.meta.url));
  for (const { variable, path } of ENV_OVERRIDES) {
    const row = docs.split("\n").find((line) => line.includes(`\`${variable}\``));
    assert.ok(row, `${variable} is missing from docs/configuration.md`);
    assert.ok(row.includes(`\`${path.join(".")}\``), `${variable} row does not name its path`);
  }
});

Deno.test("applyOverrides sets paths in place, parses integers and lists, skips empty values", () => {
  const manifest: Record<string, unknown> = { agent: { name: "t" }, http_server: {} };
  const errors: string[] = [];
  const origins = new Map<string, string>();
  const applied = applyOverrides(
    manifest,
    {
      AGENT__STORAGE__PATH: "a.db",
      AGENT__AUTH__API_KEYS: " k1 , ,k2 ",
      AGENT__HTTP__PORT: " +42 ",
      AGENT__MODEL__MODEL: "",
      HOME: "/root",
    },
    errors,
    origins,
  );
  assert.deepEqual(errors, []);
  assert.deepEqual([...applied], [
    "http_server.auth.api_keys",
    "http_server.port",
    "runtime.storage.path",
  ]);
  assert.deepEqual(manifest, {
    agent: { name: "t" },
    http_server: { auth: { api_keys: ["k1", "k2"] }, port: 42 },
    runtime: { storage: { path: "a.db" } },
  });
  assert.equal(origins.get("runtime.storage.path"), "value from AGENT__STORAGE__PATH");
  assert.equal(origins.has("agent.model.model"), false);
});
