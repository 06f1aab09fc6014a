/**
 * Readers of the AI SDK parts beyond text (models/stream_parts.ts): metadata merged per provider,
 * usage in our names without guesses, warnings as lines, a refusal's explanation.
 */
import assert from "node:assert/strict";
import {
  keptMetadata,
  mergeMetadata,
  refusalExplanation,
  usageOf,
  warningText,
} from "../../src/models/stream_parts.ts";

Deno.test("stream parts: metadata merges per provider key, empty metadata is dropped", () => {
  const merged = mergeMetadata({ anthropic: { a: 1 } }, { anthropic: { signature: "s" }, x: {} });
  assert.deepEqual(merged, { anthropic: { a: 1, signature: "s" }, x: {} });
  assert.deepEqual(keptMetadata(merged), { anthropic: { a: 1, signature: "s" } });
  assert.equal(keptMetadata({ google: { thoughtSignature: undefined } }), undefined);
  assert.equal(mergeMetadata(undefined, undefined), undefined);
});

Deno.test("stream parts: usage keeps what the provider reported, nothing more", () => {
  const usage = usageOf({
    inputTokens: { total: 10, noCache: 6, cacheRead: 4, cacheWrite: undefined },
    outputTokens: { total: 20, text: 15, reasoning: 5 },
  });
  assert.deepEqual(usage, {
    input_tokens: 10,
    output_tokens: 20,
    reasoning_tokens: 5,
    cached_input_tokens: 4,
  });
  assert.deepEqual(
    usageOf({
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: 1 },
      outputTokens: { total: 3, text: undefined, reasoning: undefined },
    }),
    { output_tokens: 3 },
  );
});

Deno.test("stream parts: warnings as lines, a refusal's explanation", () => {
  assert.equal(
    warningText({ type: "unsupported", feature: "topK", details: "no top_k" }),
    "unsupported: topK (no top_k)",
  );
  assert.equal(warningText({ type: "other", message: "placeholder" }), "other: placeholder");
  assert.equal(
    refusalExplanation({ anthropic: { stopDetails: { type: "refusal", explanation: "No." } } }),
    "No.",
  );
  assert.equal(refusalExplanation(undefined), undefined);
});
