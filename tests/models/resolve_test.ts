/**
 * Model resolution: manifest, environment credentials, run override, timeout and retry.
 */
import assert from "node:assert/strict";
import { ModelBlockSchema } from "../../src/config/schema/agent.ts";
import type { ModelBlock } from "../../src/config/schema/agent.ts";
import {
  DEFAULT_RETRY,
  knownProviders,
  ModelConfigError,
  modelWarnings,
  resolveModel,
} from "../../src/models/mod.ts";
import { assertError } from "../_kit/mod.ts";

const manifest: ModelBlock = ModelBlockSchema.parse({
  provider: "openai",
  model: "gpt-manifest",
  base_url: "https://manifest.example/v1",
  api_key: "sk-manifest",
  inference_params: { temperature: 0.2, max_tokens: 100, provider_params: { user: "u" } },
  timeout: 5000,
  retry: { max_attempts: 5, initial_backoff: 100, max_backoff: 1000 },
});

/**
 * Asserts a `ModelConfigError` the API answers as a 422 with exactly one field error, of `code`,
 * and returns that rule.
 */
async function assert422(fn: () => unknown, field: string, code: string) {
  const body = await assertError(fn, 422000, { field, rule: code, thrown: ModelConfigError });
  assert.equal(body.fields?.length, 1);
  const [rule] = body.fields![0].errors;
  assert.equal(rule.code, code);
  assert.ok(rule.message);
  return rule;
}

Deno.test("resolve: the manifest alone", () => {
  const r = resolveModel(manifest, null, {});
  assert.deepEqual(r, {
    provider: "openai",
    model: "gpt-manifest",
    base_url: "https://manifest.example/v1",
    api_key: "sk-manifest",
    inference_params: { temperature: 0.2, max_tokens: 100, provider_params: { user: "u" } },
    timeout: 5000,
    retry: { max_attempts: 5, initial_backoff: 100, max_backoff: 1000 },
  });
});

Deno.test("resolve: defaults are echo, the default retry and no timeout", () => {
  const r = resolveModel(ModelBlockSchema.parse({}), undefined, {});
  assert.deepEqual(r, {
    provider: "echo",
    model: "echo",
    inference_params: {},
    retry: { max_attempts: 3, initial_backoff: 500, max_backoff: 8000 },
  });
  assert.deepEqual(DEFAULT_RETRY, { max_attempts: 3, initial_backoff: 500, max_backoff: 8000 });
});

Deno.test("resolve: credentials and endpoint from the environment when the manifest has none", () => {
  const env = { OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: "http://env.example/v1" };
  const bare = resolveModel({ provider: "openai", model: "m" }, null, env);
  assert.equal(bare.api_key, "sk-env");
  assert.equal(bare.base_url, "http://env.example/v1");
  const configured = resolveModel(manifest, null, env);
  assert.equal(configured.api_key, "sk-manifest", "the manifest wins over the environment");
  assert.equal(configured.base_url, "https://manifest.example/v1");
  const none = resolveModel({ provider: "anthropic", model: "c" }, null, {});
  assert.equal(none.api_key, undefined, "no key is not an error here");
});

Deno.test("resolve: each provider reads its own variables", () => {
  const env = {
    ANTHROPIC_API_KEY: "a",
    ANTHROPIC_BASE_URL: "http://a",
    GOOGLE_GENERATIVE_AI_API_KEY: "g",
    GOOGLE_GENERATIVE_AI_BASE_URL: "http://g",
    OPENAI_COMPATIBLE_API_KEY: "c",
    OPENAI_COMPATIBLE_BASE_URL: "http://c",
  };
  for (const [provider, key] of [["anthropic", "a"], ["google", "g"], ["openai-compatible", "c"]]) {
    const r = resolveModel({ provider, model: "m" }, null, env);
    assert.equal(r.api_key, key);
    assert.equal(r.base_url, `http://${key}`);
  }
});

Deno.test("resolve: override fields fall back one by one", () => {
  const r = resolveModel(manifest, {
    override: { model: "gpt-run", inference_params: { temperature: 0.9, seed: 7, top_p: null } },
  }, {});
  assert.equal(r.provider, "openai");
  assert.equal(r.model, "gpt-run");
  assert.deepEqual(r.inference_params, {
    temperature: 0.9,
    max_tokens: 100,
    seed: 7,
    provider_params: { user: "u" },
  });
  assert.equal(r.api_key, "sk-manifest");
  assert.equal(r.timeout, 5000);
  assert.equal(r.retry.max_attempts, 5);
});

Deno.test("resolve: provider_params of the override replace the manifest's", () => {
  const r = resolveModel(manifest, {
    override: { inference_params: { provider_params: { store: true } } },
  }, {});
  assert.deepEqual(r.inference_params.provider_params, { store: true });
});

Deno.test("resolve: switching provider drops the manifest's model, credentials and provider_params", () => {
  const env = { ANTHROPIC_API_KEY: "sk-ant" };
  const r = resolveModel(manifest, { override: { provider: "anthropic" } }, env);
  assert.equal(r.provider, "anthropic");
  assert.equal(r.model, "claude-sonnet-4-5", "the provider's default model");
  assert.equal(r.api_key, "sk-ant");
  assert.equal(r.base_url, undefined);
  assert.deepEqual(r.inference_params, { temperature: 0.2, max_tokens: 100 });
  const echo = resolveModel(manifest, { override: { provider: "echo" } }, {});
  assert.equal(echo.model, "echo");
});

Deno.test("resolve: timeout and retry override independently", () => {
  const onlyTimeout = resolveModel(manifest, { timeout: 250 }, {});
  assert.equal(onlyTimeout.timeout, 250);
  assert.deepEqual(onlyTimeout.retry, manifest.retry);
  const onlyRetry = resolveModel(manifest, {
    retry: { max_attempts: 1, initial_backoff: 0, max_backoff: 0 },
  }, {});
  assert.equal(onlyRetry.timeout, 5000);
  assert.deepEqual(onlyRetry.retry, { max_attempts: 1, initial_backoff: 0, max_backoff: 0 });
  const nulls = resolveModel(manifest, { timeout: null, retry: null, override: null }, {});
  assert.equal(nulls.timeout, 5000);
  assert.deepEqual(nulls.retry, manifest.retry);
  const bare = resolveModel({ provider: "echo" }, { timeout: 300 }, {});
  assert.equal(bare.timeout, 300);
  assert.deepEqual(bare.retry, DEFAULT_RETRY);
});

Deno.test("resolve: the resolved retry is a copy", () => {
  const r = resolveModel({ provider: "echo" }, null, {});
  r.retry.max_attempts = 99;
  assert.equal(DEFAULT_RETRY.max_attempts, 3);
});

Deno.test("resolve: unknown provider in the override is a 422 listing the known ones", async () => {
  const rule = await assert422(
    () => resolveModel(manifest, { override: { provider: "nope" } }, {}),
    "model.override.provider",
    "unknown_provider",
  );
  assert.deepEqual(rule.params, { known: knownProviders() });
  assert.deepEqual(
    [...knownProviders()].sort(),
    ["anthropic", "echo", "google", "openai", "openai-compatible"],
  );
});

Deno.test("resolve: the allowlist limits the override's model", async () => {
  const limited: ModelBlock = { ...manifest, models: ["gpt-manifest", "gpt-big"] };
  assert.equal(resolveModel(limited, { override: { model: "gpt-big" } }, {}).model, "gpt-big");
  const rule = await assert422(
    () => resolveModel(limited, { override: { model: "gpt-other" } }, {}),
    "model.override.model",
    "unknown_model",
  );
  assert.deepEqual(rule.params, { known: ["gpt-manifest", "gpt-big"] });
  // Without an allowlist any model goes; without an override the manifest's model always does.
  assert.equal(resolveModel(manifest, { override: { model: "x" } }, {}).model, "x");
  assert.equal(resolveModel({ ...limited, model: "legacy" }, null, {}).model, "legacy");
});

Deno.test("resolve: echo has only the model echo", async () => {
  await assert422(
    () => resolveModel({ provider: "echo" }, { override: { model: "gpt-4" } }, {}),
    "model.override.model",
    "unknown_model",
  );
  await assert422(
    () => resolveModel(manifest, { override: { provider: "echo", model: "other" } }, {}),
    "model.override.model",
    "unknown_model",
  );
  assert.equal(
    resolveModel({ provider: "echo" }, { override: { model: "echo" } }, {}).model,
    "echo",
  );
});

Deno.test("resolve: openai-compatible needs a model name", async () => {
  await assert422(
    () => resolveModel(manifest, { override: { provider: "openai-compatible" } }, {}),
    "model.override.model",
    "required",
  );
  const r = resolveModel(manifest, {
    override: { provider: "openai-compatible", model: "llama" },
  }, { OPENAI_COMPATIBLE_BASE_URL: "http://localhost:8000/v1" });
  assert.equal(r.base_url, "http://localhost:8000/v1");
});

Deno.test("resolve: an unknown provider in the manifest names the manifest field", async () => {
  await assert422(
    () => resolveModel({ provider: "mystery" }, null, {}),
    "agent.model.provider",
    "unknown_provider",
  );
});

Deno.test("schema: the model block accepts a models allowlist", () => {
  const block = ModelBlockSchema.parse({ provider: "openai", models: ["a", "b"] });
  assert.deepEqual(block.models, ["a", "b"]);
  assert.throws(() => ModelBlockSchema.parse({ models: [""] }));
});

Deno.test("model warnings: the openai provider pointed at a server that is not OpenAI", () => {
  const block = (more: Record<string, unknown>) => ModelBlockSchema.parse(more);
  assert.deepEqual(modelWarnings(block({ provider: "openai" }), {}), []);
  assert.deepEqual(
    modelWarnings(block({ provider: "openai", base_url: "https://api.openai.com/v1" }), {}),
    [],
  );
  assert.deepEqual(
    modelWarnings(block({ provider: "openai", base_url: "https://x.openai.azure.com/o" }), {}),
    [],
  );
  const [mistral] = modelWarnings(
    block({ provider: "openai", base_url: "https://api.mistral.ai/v1" }),
    {},
  );
  assert.match(mistral, /openai-compatible/);
  assert.equal(
    modelWarnings(block({ provider: "openai" }), { OPENAI_BASE_URL: "http://localhost:11434/v1" })
      .length,
    1,
  );
  assert.deepEqual(
    modelWarnings(block({ provider: "openai-compatible", base_url: "http://localhost/v1" }), {}),
    [],
  );
});
