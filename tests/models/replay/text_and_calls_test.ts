/**
 * Text and tool calls of recorded real streams, on every layer: the native stream carries the
 * recorded text byte for byte and each call as streamed, the store holds the same text and calls,
 * the run record its usage, and the AG-UI client sees the same text. Whole, and cut into 7-byte
 * pieces that split events and UTF-8 characters.
 */
import assert from "node:assert/strict";
import { agUiRun, run, runRecord, startRig, storedMessages, user } from "./run_kit.ts";
import { cuts, payloads, recordedText, recording, replay, type Wire } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

const PROVIDER: Partial<Record<Wire, string>> = { openai: "openai-compatible" };

/** The tool names a recording calls (so the run offers them as client tools). */
function calledTools(fixture: string): string[] {
  const rec = recording(fixture);
  const names = new Set<string>();
  for (const p of payloads(rec) as Loose[]) {
    for (const c of p.choices ?? []) {
      for (const t of c.delta?.tool_calls ?? []) if (t.function?.name) names.add(t.function.name);
    }
    if (p.content_block?.type === "tool_use") names.add(p.content_block.name);
    for (const c of p.candidates ?? []) {
      for (const part of c.content?.parts ?? []) {
        if (part.functionCall?.name) names.add(part.functionCall.name);
      }
    }
  }
  return [...names];
}

const fixtures = [
  "openai/openai-text.chunks.txt",
  "openai/mistral-text.chunks.txt",
  "anthropic/anthropic-text.chunks.txt",
  "google/google-text.chunks.txt",
  "openai/deepseek-tool-call.chunks.txt",
  "openai/openai-parallel-tool-calls.sse",
  "openai/alibaba-tool-call.chunks.txt",
  "openai/groq-tool-call.chunks.txt",
  "openai/xai-tool-call.chunks.txt",
  "anthropic/anthropic-tool-use.sse",
  "google/google-tool-call-gemini3.chunks.txt",
];

for (const fixture of fixtures) {
  for (const piece of [undefined, 7]) {
    const how = piece ? ` (in ${piece}-byte pieces)` : "";
    Deno.test(`replay: ${fixture}: text and calls on every layer${how}`, async () => {
      const rec = recording(fixture);
      if (piece) assert.ok(cuts(rec, piece).events > 0);
      // Its multi-byte characters are cut too: pieces start inside a character.
      if (piece && fixture === "openai/openai-text.chunks.txt") {
        assert.ok(cuts(rec, piece).utf8 > 0);
      }
      const names = calledTools(fixture);
      await using rig = await startRig(rec.wire, { provider: PROVIDER[rec.wire] });
      rig.replay.enqueue(replay(rec, { piece }), replay(rec, { piece }));
      const tools = names.map((name) => ({
        name,
        description: name,
        parameters: { type: "object" },
      }));
      const events = await run(rig.t, { session_id: "s", tools, messages: [user("go")] });
      const end = events.at(-1)!;
      assert.notEqual(end.status, "failed", JSON.stringify(end.error));
      const text = recordedText(rec);
      const streamed = events.filter((e) => e.kind === "text_message_content")
        .map((e) => e.delta).join("");
      assert.equal(streamed, text);

      // Each call as streamed: its arguments are the JSON of what is stored.
      const args = new Map<string, string>();
      for (const e of events) {
        if (e.kind === "tool_call_args") {
          args.set(e.tool_call_id as string, (args.get(e.tool_call_id as string) ?? "") + e.delta);
        }
      }
      const starts = events.filter((e) => e.kind === "tool_call_start");
      assert.equal(starts.length > 0, names.length > 0);
      const stored = await storedMessages(rig.t, "s") as Loose[];
      const assistant = stored.find((m) => m.role === "assistant");
      assert.equal(
        assistant.content.filter((p: Loose) => p.type === "text").map((p: Loose) => p.value)
          .join(""),
        text,
      );
      assert.deepEqual(
        (assistant.tool_calls ?? []).map((c: Loose) => [c.id, c.name, c.arguments]),
        starts.map((e) => [
          e.tool_call_id,
          e.tool_name,
          JSON.parse(args.get(e.tool_call_id as string) || "{}"),
        ]),
      );
      if (names.length > 0) {
        assert.equal(end.status, "interrupted");
        assert.equal((end.interrupt_payload as Loose).pending.length, starts.length);
      }
      const record = await runRecord(rig.t, end.run_id as string);
      assert.equal(record.status, end.status);
      assert.ok(record.usage !== null, "the recording's usage is on the record");

      const agUi = await agUiRun(rig.t, "go");
      const agText = agUi.filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
        .map((e) => (e as Loose).delta).join("");
      assert.equal(agText, text);
      assert.equal(agUi.filter((e) => e.type === "TOOL_CALL_START").length, starts.length);
    });
  }
}
