/** Secret masking (`src/config/mask.ts`). */
import assert from "node:assert/strict";
import { maskSecrets, maskUrl } from "../../src/config/mask.ts";
import { hcl, MINIMAL } from "./helpers.ts";

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

Deno.test("maskSecrets masks lists and maps of secrets and keeps empty values", () => {
  const input = {
    api_keys: ["a", "b"],
    key: "",
    mcp: { headers: { Authorization: "Bearer x", Empty: "" }, env: { T: "t" } },
    url: "https://example.com/x",
    redis: "redis://:pw@cache:6379/0",
    port: 1,
  };
  assert.deepEqual(maskSecrets(input), {
    api_keys: ["****", "****"],
    key: "",
    mcp: { headers: { Authorization: "****", Empty: "" }, env: { T: "****" } },
    url: "https://example.com/x",
    redis: "redis://:****@cache:6379/0",
    port: 1,
  });
});

Deno.test("maskUrl hides only the password of a URL", () => {
  assert.equal(maskUrl("postgres://agent:s3cret@db:5432/x"), "postgres://agent:****@db:5432/x");
  assert.equal(maskUrl("postgres://agent@db/x"), "postgres://agent@db/x");
  assert.equal(maskUrl("not a url"), "not a url");
});
