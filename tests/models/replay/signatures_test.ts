/**
 * What a thinking model needs back: recorded Anthropic thinking (signed and redacted) and Gemini 3
 * thought signatures are stored with the assistant message and sent back, as the provider
 * requires, on the next model call of the run and of later runs on the session. Each test asserts
 * what the SECOND request carries, against the request the real API accepted, and checks the first
 * turn's recording on every layer (`onEveryLayer`).
 */
import assert from "node:assert/strict";
import { clientTool, onEveryLayer, run, startRig, storedMessages, user } from "./run_kit.ts";
import { cuts, fixtureJson, payloads, recording, replay } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** A client's answer to a tool call, as a tool message. */
const answer = (id: string, value: string) => ({
  role: "tool",
  tool_call_id: id,
  content: [{ type: "text", value }],
});

for (const piece of [undefined, 7]) {
  const how = piece ? ` (in ${piece}-byte pieces)` : "";

  Deno.test(`replay: Claude thinking before tool_use is sent back in the tool loop${how}`, async () => {
    await using rig = await startRig("anthropic", {
      model: {
        model: "claude-sonnet-4-0",
        inference_params: {
          provider_params: { thinking: { type: "enabled", budget_tokens: 3000 } },
        },
      },
    });
    const first = recording("anthropic/anthropic-thinking-tool-loop.1.json");
    if (piece) assert.ok(cuts(first, piece).utf8 + cuts(first, piece).events > 0);
    rig.replay.enqueue(
      replay(first, { piece }),
      replay(recording("anthropic/anthropic-thinking-tool-loop.2.json"), { piece }),
    );
    const tools = [clientTool("get_user_country")];
    const one = await run(rig.t, {
      session_id: "think",
      tools,
      messages: [user("What is the largest city in the user country?")],
    });
    const end = one.at(-1)!;
    assert.equal(end.status, "interrupted", JSON.stringify(end));
    const [call] = (end.interrupt_payload as Loose).pending;
    const two = await run(rig.t, {
      session_id: "think",
      tools,
      messages: [answer(call.tool_call_id, "Mexico")],
    });
    assert.equal(two.at(-1)!.status, "completed", JSON.stringify(two.at(-1)));

    // The assistant turn of the second request is the one the real API accepted.
    const accepted = fixtureJson<Loose>("anthropic/anthropic-thinking-tool-loop.2.request.json");
    const sent = rig.replay.requests[1].body as Loose;
    // (`is_error: false` is the API's default, which the AI SDK leaves out.)
    const { is_error: _, ...result } = accepted.messages[2].content[0];
    assert.deepEqual(sent.messages, [
      ...accepted.messages.slice(0, 2),
      { ...accepted.messages[2], content: [result] },
    ]);

    // Stored: reasoning with its signature, before the text.
    const stored = await storedMessages(rig.t, "think");
    const assistant = stored.find((m) => m.role === "assistant") as Loose;
    const thinking = accepted.messages[1].content[0];
    assert.deepEqual(assistant.content[0], {
      type: "reasoning",
      value: thinking.thinking,
      provider_metadata: { anthropic: { signature: thinking.signature } },
    });
    assert.equal(assistant.content[1].type, "text");

    // The first turn's recording on every layer (a new session, and AG-UI).
    rig.replay.enqueue(replay(first, { piece }), replay(first, { piece }));
    const layers = await onEveryLayer(
      rig.t,
      { session_id: "think-layers", tools, messages: [user("Largest city?")] },
      tools,
    );
    assert.equal(layers.end.status, "interrupted");
    assert.ok(layers.agUi.some((e) => e.type === "REASONING_MESSAGE_CONTENT"));
  });

  Deno.test(`replay: redacted and signed thinking reach the next run on the session${how}`, async () => {
    await using rig = await startRig("anthropic");
    const rec = recording("anthropic/anthropic-redacted-thinking.sse");
    rig.replay.enqueue(
      replay(rec, { piece }),
      replay(recording("anthropic/anthropic-text.chunks.txt"), { piece }),
    );
    await run(rig.t, { session_id: "redacted", messages: [user("think")] });
    await run(rig.t, { session_id: "redacted", messages: [user("again")] });
    // What the stream carried, block by block: the second request sends each back as it came.
    const blocks: Loose[] = [];
    for (const p of payloads(rec) as Loose[]) {
      if (p.type === "content_block_start") blocks[p.index] = { ...p.content_block };
      if (p.type === "content_block_delta") {
        const b = blocks[p.index];
        if (p.delta.type === "thinking_delta") b.thinking += p.delta.thinking;
        if (p.delta.type === "signature_delta") b.signature = p.delta.signature;
        if (p.delta.type === "text_delta") b.text += p.delta.text;
      }
    }
    assert.ok(blocks.some((b) => b.type === "redacted_thinking"), "the recording has one");
    rig.replay.enqueue(replay(rec, { piece }), replay(rec, { piece }));
    const layers = await onEveryLayer(rig.t, {
      session_id: "redacted-layers",
      messages: [user("x")],
    });
    assert.ok(layers.agUi.some((e) => e.type === "REASONING_ENCRYPTED_VALUE"));
    const sent = rig.replay.requests[1].body as Loose;
    const assistant = sent.messages[1];
    assert.equal(assistant.role, "assistant");
    assert.deepEqual(
      assistant.content.map((b: Loose) => {
        const { cache_control: _, ...rest } = b;
        return rest;
      }),
      blocks.map((b) =>
        b.type === "text"
          ? { type: "text", text: b.text }
          : b.type === "redacted_thinking"
          ? { type: "redacted_thinking", data: b.data }
          : { type: "thinking", thinking: b.thinking, signature: b.signature }
      ),
    );
  });

  Deno.test(`replay: Gemini 3 thought signature goes back on the function call${how}`, async () => {
    await using rig = await startRig("google", { model: { model: "gemini-3-pro-preview" } });
    const first = recording("google/google-thought-signature-loop.1.sse");
    rig.replay.enqueue(
      replay(first, { piece }),
      replay(recording("google/google-thought-signature-loop.2.sse"), { piece }),
    );
    const tools = [clientTool("get_country")];
    const one = await run(rig.t, {
      session_id: "gemini",
      tools,
      messages: [user("What is the capital of the user country? Call the tool")],
    });
    const [call] = (one.at(-1)!.interrupt_payload as Loose).pending;
    const two = await run(rig.t, {
      session_id: "gemini",
      tools,
      messages: [answer(call.tool_call_id, "Mexico")],
    });
    assert.equal(two.at(-1)!.status, "completed");
    const streamed = (payloads(first)[0] as Loose).candidates[0].content.parts[0];
    const sent = rig.replay.requests[1].body as Loose;
    const model = sent.contents.find((c: Loose) => c.role === "model");
    const fc = model.parts.find((p: Loose) => p.functionCall);
    assert.equal(fc.functionCall.name, "get_country");
    // The API accepted the same signature (the recorded request spells it in base64url).
    const accepted = fixtureJson<Loose>("google/google-thought-signature-loop.2.request.json");
    const acceptedSig = accepted.contents[1].parts[0].thoughtSignature;
    assert.equal(fc.thoughtSignature, streamed.thoughtSignature);
    assert.equal(fc.thoughtSignature.replaceAll("+", "-").replaceAll("/", "_"), acceptedSig);

    // The first turn's recording on every layer (a new session, and AG-UI).
    rig.replay.enqueue(replay(first, { piece }), replay(first, { piece }));
    const layers = await onEveryLayer(
      rig.t,
      { session_id: "gemini-layers", tools, messages: [user("Capital?")] },
      tools,
    );
    assert.equal(layers.end.status, "interrupted");
    const stored = layers.stored.find((m) => m.role === "assistant") as Loose;
    assert.equal(
      stored.tool_calls[0].provider_metadata.google.thoughtSignature,
      streamed.thoughtSignature,
    );
  });
}
