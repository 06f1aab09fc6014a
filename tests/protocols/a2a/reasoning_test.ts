/**
 * Reasoning of recorded real provider streams (DeepSeek `reasoning_content`, Anthropic thinking)
 * through A2A, read with the official `@a2a-js/sdk` client over both bindings: each reasoning
 * block is a `reasoning` artifact (agentd's reasoning extension, a data part `{text, messageId}`),
 * whole, before the answer's last chunk; the card declares the extension; `reasoning = "hide"`
 * sends none.
 */
import assert from "node:assert/strict";
import type { StreamResponse, TaskArtifactUpdateEvent } from "@a2a-js/sdk";
import { startRig } from "../../models/replay/run_kit.ts";
import { recordedReasoning, recording, replay, type Wire } from "../../models/replay/server.ts";
import { REASONING_EXTENSION } from "../../../src/protocols/a2a/task.ts";
import { clientFor, collect, message, request, text, transports } from "./sdk.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** The artifact updates of a stream. */
function artifactUpdates(events: StreamResponse[]): TaskArtifactUpdateEvent[] {
  return events.flatMap((e) => e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []);
}

for (
  const fixture of [
    "openai/deepseek-reasoning.chunks.txt",
    "anthropic/anthropic-thinking.chunks.txt",
  ]
) {
  Deno.test(`a2a: reasoning of ${fixture} as reasoning artifacts`, async (tt) => {
    const rec = recording(fixture);
    await using rig = await startRig(rec.wire as Wire);
    for (const transport of transports) {
      await tt.step(transport, async () => {
        const client = await clientFor(rig.t, transport);
        const card = await client.getAgentCard();
        assert.ok(
          card.capabilities?.extensions.some((e) => e.uri === REASONING_EXTENSION && !e.required),
          "the card declares the reasoning extension",
        );
        rig.replay.enqueue(replay(rec));
        const updates = artifactUpdates(
          await collect(client.sendMessageStream(request(message([text("think")])))),
        );
        const reasoning = updates.filter((u) => u.artifact?.name === "reasoning");
        assert.ok(reasoning.length > 0);
        const answerId = updates.find((u) => u.artifact?.name === "response")!.artifact!.artifactId;
        const texts = reasoning.map((u) => {
          const artifact = u.artifact as Loose;
          assert.deepEqual(artifact.extensions, [REASONING_EXTENSION]);
          assert.equal(u.append, false);
          assert.equal(u.lastChunk, true);
          const [part] = artifact.parts;
          assert.equal(part.content.$case, "data");
          assert.equal(part.content.value.messageId, answerId, "it names the answer's artifact");
          return part.content.value.text;
        });
        assert.equal(texts.join(""), recordedReasoning(rec));
        const first = updates.findIndex((u) => u.artifact?.name === "reasoning");
        const answer = updates.findIndex((u) => u.artifact?.name === "response");
        assert.ok(first < answer, "the reasoning comes before the answer");
      });
    }
  });
}

Deno.test("a2a: reasoning = hide sends no reasoning artifact", async () => {
  const rec = recording("openai/deepseek-reasoning.chunks.txt");
  await using rig = await startRig("openai", { agent: { reasoning: "hide" } });
  rig.replay.enqueue(replay(rec));
  const client = await clientFor(rig.t, "HTTP+JSON");
  const updates = artifactUpdates(
    await collect(client.sendMessageStream(request(message([text("think")])))),
  );
  assert.ok(updates.some((u) => u.artifact?.name === "response"));
  assert.ok(!updates.some((u) => u.artifact?.name === "reasoning"));
});
