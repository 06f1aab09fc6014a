/**
 * Usage and stop reasons of recorded real streams, carried to every layer: the native
 * `run_finished`, the run record (per step and for the run) and AG-UI's `RUN_FINISHED` (`usage`,
 * `metadata.finishReason`) through the official client, with the stored messages (`onEveryLayer`). A refusal's explanation is the answer,
 * streamed and stored.
 */
import assert from "node:assert/strict";
import { storeKinds } from "../../_kit/mod.ts";
import { onEveryLayer, runRecord, startRig, storedMessages, user } from "./run_kit.ts";
import { recording, replay, type Wire } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

interface Case {
  fixture: string;
  finish_reason: string;
  raw: string;
  usage: Record<string, number>;
}

const cases: Case[] = [
  {
    fixture: "openai/openai-text.chunks.txt",
    finish_reason: "stop",
    raw: "stop",
    usage: { input_tokens: 16, output_tokens: 300, reasoning_tokens: 0, cached_input_tokens: 0 },
  },
  {
    fixture: "openai/deepseek-text-length.chunks.txt",
    finish_reason: "length",
    raw: "length",
    usage: { input_tokens: 13, output_tokens: 400, cached_input_tokens: 0 },
  },
  {
    fixture: "google/google-max-tokens.json",
    finish_reason: "length",
    raw: "MAX_TOKENS",
    usage: { input_tokens: 15, output_tokens: 5 },
  },
  {
    fixture: "google/google-safety.json",
    finish_reason: "content_filter",
    raw: "SAFETY",
    usage: { input_tokens: 14 },
  },
  {
    fixture: "anthropic/anthropic-refusal.chunks.txt",
    finish_reason: "refusal",
    raw: "refusal",
    usage: { input_tokens: 18, output_tokens: 5, cached_input_tokens: 0 },
  },
];

// The first case on every store kind; the others on SQLite.
for (
  const [c, store] of [
    ...storeKinds.map((k) => [cases[0], k] as const),
    ...cases.slice(1).map((c) => [c, "sqlite"] as const),
  ]
) {
  Deno.test(`replay: ${c.fixture} ends ${c.finish_reason} with its usage everywhere (${store})`, async () => {
    const rec = recording(c.fixture);
    await using rig = await startRig(rec.wire as Wire, { store });
    rig.replay.enqueue(replay(rec), replay(rec));
    const { events, agUi } = await onEveryLayer(rig.t, {
      session_id: "s",
      messages: [user("hello")],
    });
    const end = events.at(-1)!;
    assert.equal(end.kind, "run_finished");
    assert.equal(end.status, "completed");
    assert.equal(end.finish_reason, c.finish_reason);
    // Counts the provider did not report may be absent; those it did are exact.
    const usage = end.usage as Loose;
    for (const [k, v] of Object.entries(c.usage)) assert.equal(usage[k], v, k);

    // Prometheus: the tokens the provider reported, by provider, model and kind (two runs: the
    // native one and the AG-UI one).
    const metrics = await (await rig.t.fetch("/metrics")).text();
    const provider = { openai: "openai-compatible", anthropic: "anthropic", google: "google" }[
      rec.wire as Wire
    ];
    if (usage.input_tokens) {
      assert.ok(
        metrics.includes(
          `agentd_model_tokens_total{provider="${provider}",model="${provider}-replayed",` +
            `kind="input"} ${2 * usage.input_tokens}\n`,
        ),
        metrics.split("\n").filter((l) => l.includes("tokens")).join("\n"),
      );
    }

    const record = await runRecord(rig.t, end.run_id as string);
    assert.equal(record.finish_reason, c.finish_reason);
    assert.deepEqual(record.usage, usage);
    assert.deepEqual(record.model_steps, [{
      step: 1,
      finish_reason: c.finish_reason,
      raw_finish_reason: c.raw,
      usage,
    }]);

    const finished = agUi.find((e) => e.type === "RUN_FINISHED") as Loose;
    assert.equal(finished.metadata.finishReason, c.finish_reason);
    const [tokens] = finished.usage;
    if (usage.input_tokens !== undefined) assert.equal(tokens.inputTokens, usage.input_tokens);
    if (usage.output_tokens !== undefined) assert.equal(tokens.outputTokens, usage.output_tokens);

    if (c.finish_reason === "refusal") {
      // The explanation is the answer: streamed, stored, and the run's result.
      const explanation = "This request triggered restrictions on violative cyber content and " +
        "was blocked under Anthropic's Usage Policy.";
      const text = events.filter((e) => e.kind === "text_message_content").map((e) => e.delta)
        .join("");
      assert.equal(text, explanation);
      assert.equal((end.result as Loose).text, explanation);
      const stored = await storedMessages(rig.t, "s");
      assert.deepEqual((stored.at(-1) as Loose).content, [{ type: "text", value: explanation }]);
    }
  });
}
