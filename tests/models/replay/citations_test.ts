/**
 * Sources and citations of a recorded real Claude web search (`anthropic-web-search.chunks.txt`)
 * carried on every layer: each search result (a `source` stream part) and each citation in the
 * answer (`citations_delta`, with the passage it cites) is a native `source` event, a `source`
 * part of the stored assistant message, an AG-UI `CUSTOM` event `source` (official client), an AI
 * SDK `source-url` part (official chat, every chunk checked against the `ai` package's schema) and
 * a data part of the A2A `sources` artifact (`@a2a-js/sdk`, streamed and read). The expected
 * sources are read from the recording itself, in its order. Gemini's Google Search grounding
 * chunks are sources on every layer too.
 */
import assert from "node:assert/strict";
import type { StreamResponse } from "@a2a-js/sdk";
import { asTask, clientFor, collect, message, request, text } from "../../protocols/a2a/sdk.ts";
import { Chat, ChatFetch, transport } from "../../protocols/ai_sdk/chat.ts";
import {
  agUiRun,
  onEveryLayer,
  run,
  runRecord,
  startRig,
  storedMessages,
  user,
} from "./run_kit.ts";
import { fixtureText, payloads, recording, replay } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

const FIXTURE = "anthropic/anthropic-web-search.chunks.txt";

/** The recording's search results, then its citations, as agentd's source fields. */
function recordedSources(): Loose[] {
  const lines = fixtureText(FIXTURE).split("\n").filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
  const results = lines.flatMap((e) =>
    e.type === "content_block_start" && e.content_block.type === "web_search_tool_result"
      ? e.content_block.content
      : []
  ).map((r: Loose) => ({ source_type: "url", url: r.url, title: r.title }));
  const citations = lines.flatMap((e) =>
    e.type === "content_block_delta" && e.delta.type === "citations_delta" ? [e.delta.citation] : []
  ).map((c: Loose) => ({
    source_type: "url",
    url: c.url,
    title: c.title,
    cited_text: c.cited_text,
  }));
  return [...results, ...citations];
}

/** A source's fields without its id (ids are the provider's or the AI SDK's). */
const withoutId = ({ source_id: _, ...rest }: Loose) => rest;

for (const piece of [undefined, 7]) {
  const how = piece ? ` (${piece}-byte pieces)` : "";
  Deno.test(`replay: web search sources and citations on every layer${how}`, async (tt) => {
    const expected = recordedSources();
    assert.equal(expected.length, 24, "10 search results and 14 citations");
    const rec = recording(FIXTURE);
    await using rig = await startRig("anthropic");
    const enqueue = () => rig.replay.enqueue(replay(rec, { piece }));

    await tt.step("native source events, the run record and the stored message", async () => {
      enqueue();
      const events = await run(rig.t, { session_id: "w", messages: [user("news")] });
      const end = events.at(-1)!;
      assert.equal(end.status, "completed");
      const record = await runRecord(rig.t, end.run_id as string);
      assert.equal(record.status, "completed");
      assert.deepEqual(record.usage, end.usage);
      const sources = events.filter((e) => e.kind === "source") as Loose[];
      const messageId = events.find((e) => e.kind === "text_message_start")!.message_id;
      assert.ok(sources.every((s) => s.message_id === messageId && s.source_id));
      assert.deepEqual(
        sources.map(({ kind: _k, timestamp: _t, message_id: _m, ...s }) => withoutId(s)),
        expected,
      );
      const stored = (await storedMessages(rig.t, "w")).find((m) =>
        m.role === "assistant"
      ) as Loose;
      const parts = stored.content.filter((p: Loose) => p.type === "source");
      assert.deepEqual(
        parts,
        sources.map(({ kind: _k, timestamp: _t, message_id: _m, ...s }) => ({
          type: "source",
          ...s,
        })),
      );
      // The answer's text is whole, before its sources.
      assert.equal(stored.content[0].type, "text");
    });

    await tt.step("AG-UI CUSTOM source events", async () => {
      enqueue();
      const events = await agUiRun(rig.t, "news");
      const custom = events.filter((e) => e.type === "CUSTOM" && e.name === "source") as Loose[];
      assert.deepEqual(
        custom.map((e) => {
          const { messageId: _m, sourceId, sourceType, citedText, ...rest } = e.value;
          assert.ok(sourceId);
          return {
            source_type: sourceType,
            ...rest,
            ...(citedText ? { cited_text: citedText } : {}),
          };
        }),
        expected,
      );
    });

    await tt.step("AI SDK source-url parts", async () => {
      enqueue();
      const recorder = new ChatFetch();
      const chat = new Chat({ id: crypto.randomUUID(), transport: transport(rig.t.url, recorder) });
      await chat.sendMessage({ text: "news" });
      assert.equal(chat.status, "ready", String(chat.error));
      const parts = chat.messages.at(-1)!.parts.filter((p) => p.type === "source-url") as Loose[];
      assert.deepEqual(
        parts.map((p) => ({
          source_type: "url",
          url: p.url,
          title: p.title,
          ...(p.providerMetadata?.agentd?.citedText
            ? { cited_text: p.providerMetadata.agentd.citedText }
            : {}),
        })),
        expected,
      );
      await recorder.checkAll();
    });

    await tt.step("A2A sources artifact, streamed and read", async () => {
      const client = await clientFor(rig.t, "HTTP+JSON");
      enqueue();
      const events: StreamResponse[] = await collect(
        client.sendMessageStream(request(message([text("news")]))),
      );
      const updates = events.flatMap((e) =>
        e.payload?.$case === "artifactUpdate" && e.payload.value.artifact?.name === "sources"
          ? [e.payload.value]
          : []
      );
      assert.equal(updates.length, 1, "one sources artifact, whole");
      const data = (a: Loose) =>
        a.parts.map((p: Loose) => {
          assert.equal(p.content.$case, "data");
          const { sourceId, sourceType, citedText, ...rest } = p.content.value;
          assert.ok(sourceId);
          return {
            source_type: sourceType,
            ...rest,
            ...(citedText ? { cited_text: citedText } : {}),
          };
        });
      assert.deepEqual(data(updates[0].artifact), expected);
      const task = asTask(await client.getTask({ tenant: "", id: updates[0].taskId }));
      const read = task.artifacts?.filter((a) => a.name === "sources") ?? [];
      assert.equal(read.length, 1);
      assert.deepEqual(read[0], updates[0].artifact, "the read task has the streamed artifact");
    });
  });
}

Deno.test("replay: Gemini grounding chunks are sources on every layer", async () => {
  const rec = recording("google/google-web-search-grounding.sse");
  const chunks = (payloads(rec) as Loose[]).flatMap((p) =>
    p.candidates?.[0]?.groundingMetadata?.groundingChunks ?? []
  ).map((c: Loose) => ({ source_type: "url", url: c.web.uri, title: c.web.title }));
  assert.ok(chunks.length > 0, "the recording has grounding chunks");
  await using rig = await startRig("google");
  rig.replay.enqueue(replay(rec), replay(rec));
  const { events, stored, agUi } = await onEveryLayer(rig.t, {
    session_id: "grounded",
    messages: [user("weather")],
  });
  const sources = events.filter((e) => e.kind === "source") as Loose[];
  // The provider gives them in its own order: compare as sets of (url, title).
  const key = (s: Loose) => `${s.url} ${s.title}`;
  assert.deepEqual(
    sources.map(({ kind: _k, timestamp: _t, message_id: _m, ...s }) => withoutId(s)).map(key)
      .sort(),
    chunks.map(key).sort(),
  );
  const parts = (stored.find((m) => m.role === "assistant") as Loose).content
    .filter((p: Loose) => p.type === "source");
  assert.equal(parts.length, sources.length);
  const custom = agUi.filter((e) => e.type === "CUSTOM" && (e as Loose).name === "source");
  assert.equal(custom.length, sources.length);
});
