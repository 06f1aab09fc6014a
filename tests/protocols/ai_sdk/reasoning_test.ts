/**
 * Reasoning of recorded real provider streams (DeepSeek `reasoning_content`, Anthropic thinking)
 * through the AI SDK add-on to the official `ai` chat: one reasoning part per block, its text as
 * recorded, before the answer's text; every stream checked chunk by chunk (chat.ts).
 */
import assert from "node:assert/strict";
import { startRig } from "../../models/replay/run_kit.ts";
import { recordedReasoning, recording, replay, type Wire } from "../../models/replay/server.ts";
import { Chat, ChatFetch, textOf, transport } from "./chat.ts";

for (
  const fixture of [
    "openai/deepseek-reasoning.chunks.txt",
    "anthropic/anthropic-thinking.chunks.txt",
  ]
) {
  Deno.test(`AI SDK add-on: reasoning of ${fixture} as reasoning parts`, async () => {
    const rec = recording(fixture);
    await using rig = await startRig(rec.wire as Wire);
    rig.replay.enqueue(replay(rec));
    const recorder = new ChatFetch();
    const chat = new Chat({ id: crypto.randomUUID(), transport: transport(rig.t.url, recorder) });
    await chat.sendMessage({ text: "think" });
    assert.equal(chat.status, "ready", String(chat.error));
    const message = chat.messages.at(-1)!;
    const reasoning = message.parts.filter((p) => p.type === "reasoning");
    assert.ok(reasoning.length > 0, "the answer has reasoning parts");
    assert.equal(
      reasoning.map((p) => p.type === "reasoning" ? p.text : "").join(""),
      recordedReasoning(rec),
    );
    const kinds = message.parts.map((p) => p.type).filter((t) => t === "reasoning" || t === "text");
    assert.equal(kinds[0], "reasoning", "the reasoning comes before the answer");
    assert.ok(textOf(message).length > 0, "and the answer's text follows");
    assert.equal((await recorder.checkAll()).length, 1);
  });
}
