/**
 * Reasoning of recorded real streams (DeepSeek `reasoning_content`, Anthropic thinking and
 * redacted thinking, xAI reasoning) on the wire and in the store: native `reasoning_message_*`
 * events, AG-UI `REASONING_*` through `@ag-ui/client`, the stored `reasoning` part, byte for byte
 * as recorded, whole and cut into pieces, the run record agreeing with the stream; Gemini thought
 * summaries as reasoning before the calls they lead to; `agent.reasoning = "hide"` keeps it off the
 * wire only.
 */
import assert from "node:assert/strict";
import {
  agUiRun,
  clientTool,
  onEveryLayer,
  run,
  startRig,
  storedMessages,
  user,
} from "./run_kit.ts";
import { cuts, payloads, recordedReasoning, recording, replay, type Wire } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

const fixtures = [
  "openai/deepseek-reasoning.chunks.txt",
  "anthropic/anthropic-thinking.chunks.txt",
  "anthropic/anthropic-redacted-thinking.sse",
];

for (const fixture of fixtures) {
  for (const piece of [undefined, 7]) {
    const how = piece ? ` (in ${piece}-byte pieces)` : "";
    Deno.test(`replay: ${fixture}: reasoning streamed and stored${how}`, async () => {
      const rec = recording(fixture);
      if (piece) assert.ok(cuts(rec, piece).events > 0);
      await using rig = await startRig(rec.wire as Wire);
      rig.replay.enqueue(replay(rec, { piece }), replay(rec, { piece }));
      const { events, agUi } = await onEveryLayer(rig.t, {
        session_id: "r",
        messages: [user("think")],
      });
      const reasoning = recordedReasoning(rec);
      const redacted = (payloads(rec) as Loose[]).filter((p) =>
        p.content_block?.type === "redacted_thinking"
      ).map((p) => p.content_block.data);
      assert.ok(reasoning.length > 0 || redacted.length > 0, "the recording has reasoning");
      const streamed = events.filter((e) => e.kind === "reasoning_message_content")
        .map((e) => e.delta).join("");
      assert.equal(streamed, reasoning);
      const starts = events.filter((e) => e.kind === "reasoning_message_start");
      const ends = events.filter((e) => e.kind === "reasoning_message_end");
      assert.equal(starts.length, ends.length);
      assert.ok(starts.every((s) => typeof s.parent_message_id === "string"));

      const stored = await storedMessages(rig.t, "r") as Loose[];
      const parts = stored.find((m) => m.role === "assistant").content;
      const kept = parts.filter((p: Loose) => p.type === "reasoning");
      assert.equal(kept.map((p: Loose) => p.value).join(""), reasoning);
      assert.equal(kept.length, starts.length, "one stored part per streamed block");

      // Redacted thinking: only its encrypted value, on the wire as in the store.
      assert.deepEqual(ends.flatMap((e) => e.encrypted_value ? [e.encrypted_value] : []), redacted);
      assert.deepEqual(
        kept.flatMap((p: Loose) => p.provider_metadata?.anthropic?.redactedData ?? []),
        redacted,
      );

      const agText = agUi.filter((e) => e.type === "REASONING_MESSAGE_CONTENT")
        .map((e) => (e as Loose).delta).join("");
      assert.equal(agText, reasoning);
      assert.equal(agUi.filter((e) => e.type === "REASONING_START").length, starts.length);
      assert.deepEqual(
        agUi.filter((e) => e.type === "REASONING_ENCRYPTED_VALUE").map((e) =>
          (e as Loose).encryptedValue
        ),
        redacted,
      );
    });
  }
}

Deno.test("replay: reasoning = hide keeps reasoning off the wire, not out of the store", async () => {
  const rec = recording("openai/deepseek-reasoning.chunks.txt");
  await using rig = await startRig("openai", { agent: { reasoning: "hide" } });
  rig.replay.enqueue(replay(rec), replay(rec));
  const events = await run(rig.t, { session_id: "h", messages: [user("think")] });
  assert.ok(!events.some((e) => e.kind.startsWith("reasoning_")));
  const agUi = await agUiRun(rig.t, "think");
  assert.ok(!agUi.some((e) => e.type.startsWith("REASONING")));
  const stored = await storedMessages(rig.t, "h") as Loose[];
  const parts = stored.find((m) => m.role === "assistant").content;
  assert.equal(parts[0].type, "reasoning");
  assert.equal(parts[0].value, recordedReasoning(rec));
});

Deno.test("replay: a run's reasoning = hide (or show) wins over the agent's", async () => {
  const rec = recording("openai/deepseek-reasoning.chunks.txt");
  await using rig = await startRig("openai", { agent: { reasoning: "hide" } });
  rig.replay.enqueue(replay(rec), replay(rec));
  const shown = await run(rig.t, { reasoning: "show", messages: [user("think")] });
  assert.ok(shown.some((e) => e.kind === "reasoning_message_content"));
  await using other = await startRig("openai");
  other.replay.enqueue(replay(rec));
  const hidden = await run(other.t, { reasoning: "hide", messages: [user("think")] });
  assert.ok(!hidden.some((e) => e.kind.startsWith("reasoning_")));
});

for (const piece of [undefined, 7]) {
  const how = piece ? ` (in ${piece}-byte pieces)` : "";
  Deno.test(`replay: Gemini thought summaries are reasoning events before the calls${how}`, async () => {
    const rec = recording("google/google-thought-summary-tool-call.chunks.txt");
    await using rig = await startRig("google");
    rig.replay.enqueue(replay(rec, { piece }), replay(rec, { piece }));
    const tools = ["read_theme", "read_screen"].map(clientTool);
    const { events, end, stored, record, agUi } = await onEveryLayer(
      rig.t,
      { session_id: "gt", tools, messages: [user("read the theme and screens")] },
      tools,
    );
    const summary = recordedReasoning(rec);
    assert.match(summary, /^\*\*Processing User Requests\*\*/);
    assert.equal(
      events.filter((e) => e.kind === "reasoning_message_content").map((e) => e.delta).join(""),
      summary,
    );
    const firstCall = events.findIndex((e) => e.kind === "tool_call_start");
    const lastReasoning = events.findLastIndex((e) => e.kind === "reasoning_message_end");
    assert.ok(lastReasoning >= 0 && lastReasoning < firstCall, "the summary ends before the calls");
    assert.equal(end.status, "interrupted");
    assert.equal(end.finish_reason, "tool_calls");
    // The thoughts' tokens, as Gemini counted them (thoughtsTokenCount).
    assert.equal((record.usage as Loose).reasoning_tokens, 183);

    const assistant = stored.find((m) => m.role === "assistant") as Loose;
    assert.equal(assistant.content[0].type, "reasoning");
    assert.equal(assistant.content[0].value, summary);
    assert.deepEqual(
      assistant.tool_calls.map((c: Loose) => [c.name, c.arguments]),
      [["read_theme", {}], ["read_screen", { id: "A" }], ["read_screen", { id: "B" }], [
        "read_screen",
        { id: "C" },
      ]],
    );
    // The first call keeps its thought signature, sent back on the next call.
    assert.ok(assistant.tool_calls[0].provider_metadata?.google?.thoughtSignature);

    const agText = agUi.filter((e) => e.type === "REASONING_MESSAGE_CONTENT")
      .map((e) => (e as Loose).delta).join("");
    assert.equal(agText, summary);
    assert.equal(agUi.filter((e) => e.type === "TOOL_CALL_START").length, 4);
  });
}
