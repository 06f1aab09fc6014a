/**
 * Errors of recorded streams, each checked on every layer (native stream, stored messages, run
 * record, AG-UI through `@ag-ui/client`; `onEveryLayer`): an early `server_error` frame (before any
 * output) is retried the same on every provider that speaks the wire, decided on what the frame
 * says; an error after output fails the run with what was said kept; a 429 before any output is
 * retried.
 */
import assert from "node:assert/strict";
import { clientTool, onEveryLayer, startRig, user } from "./run_kit.ts";
import { payloads, recordedText, recording, replay } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

for (const provider of ["openai", "openai-compatible"]) {
  Deno.test(`replay: ${provider}: an early server_error frame is retried`, async () => {
    await using rig = await startRig("openai", { provider });
    const text = recording("openai/openai-text.chunks.txt");
    const early = recording("openai/openai-early-server-error.chunks.txt");
    rig.replay.enqueue(replay(early), replay(text), replay(early), replay(text));
    const { end } = await onEveryLayer(rig.t, { session_id: "e", messages: [user("hi")] });
    assert.equal(end.status, "completed", JSON.stringify(end.error));
    assert.equal(rig.replay.requests.length, 4, "each run retried once");
    assert.equal((end.result as Loose).text, recordedText(text));
  });
}

Deno.test("replay: an error frame after output fails the run, the text said is kept", async () => {
  await using rig = await startRig("openai");
  const rec = recording("openai/groq-error-after-output.sse");
  rig.replay.enqueue(replay(rec), replay(rec));
  const { end, events, stored, agUi } = await onEveryLayer(rig.t, {
    session_id: "g",
    messages: [user("hi")],
  });
  assert.equal(end.status, "failed");
  assert.equal((end.error as Loose).code, "model_stream");
  assert.equal(rig.replay.requests.length, 2, "never retried after output");
  const said = events.filter((e) => e.kind === "text_message_content").map((e) => e.delta).join("");
  assert.equal(said, recordedText(rec));
  assert.deepEqual((stored.at(-1) as Loose).content.filter((p: Loose) => p.type === "text"), [
    { type: "text", value: said },
  ]);
  // The reasoning said before the error reached AG-UI too, closed before RUN_ERROR.
  assert.ok(agUi.some((e) => e.type === "REASONING_MESSAGE_CONTENT"));
});

Deno.test("replay: a Gemini 429 before any output is retried", async () => {
  await using rig = await startRig("google");
  const text = recording("google/google-text.chunks.txt");
  const limited = recording("google/google-429-retry-info.json");
  rig.replay.enqueue(replay(limited), replay(text), replay(limited), replay(text));
  const { end } = await onEveryLayer(rig.t, { session_id: "q", messages: [user("hi")] });
  assert.equal(end.status, "completed");
  assert.equal(rig.replay.requests.length, 4);
});

Deno.test("replay: a Mistral tool call without index: openai refuses, openai-compatible runs it", async () => {
  const rec = recording("openai/mistral-tool-call.chunks.txt");
  const name = (payloads(rec) as Loose[]).flatMap((p) => p.choices ?? [])
    .flatMap((c: Loose) => c.delta?.tool_calls ?? [])[0].function.name;
  const tools = [{ name, description: name, parameters: { type: "object" } }];
  for (const provider of ["openai", "openai-compatible"]) {
    await using rig = await startRig("openai", { provider });
    rig.replay.enqueue(replay(rec), replay(rec));
    const { end, agUi } = await onEveryLayer(
      rig.t,
      { session_id: "m", tools, messages: [user("hi")] },
      [clientTool(name)],
    );
    if (provider === "openai") {
      // Documented (docs/models.md) and warned by `agentd check`: use openai-compatible.
      assert.equal(end.status, "failed");
    } else {
      assert.equal(end.status, "interrupted", JSON.stringify(end.error));
      const [pending] = (end.interrupt_payload as Loose).pending;
      assert.equal(pending.tool_name, name);
      const start = agUi.find((e) => e.type === "TOOL_CALL_START") as Loose;
      assert.equal(start.toolCallName, name);
    }
  }
});
