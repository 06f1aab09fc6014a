/**
 * Runs through a real agentd server whose model is a replay server: the manifest's model points at
 * the replay server, each run's model calls take the recordings enqueued for them, and the
 * helpers read what a client sees (native events) and what was stored.
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import { RecordingFetch, type WireEvent } from "../../protocols/ag_ui/helpers.ts";
import {
  type EventData,
  readEvents,
  startTestServer,
  type StoreKind,
  type TestServer,
} from "../../_kit/mod.ts";
import { type FakeServer, modelBlock, startReplayServer, type Wire } from "./server.ts";

/** The provider each wire is spoken by in agentd. */
const PROVIDER: Record<Wire, string> = {
  openai: "openai-compatible",
  anthropic: "anthropic",
  google: "google",
};

/** A server and the replay server its model talks to. */
export interface ReplayRig extends AsyncDisposable {
  t: TestServer;
  replay: FakeServer;
}

/** Starts a replay server for `wire` and an agentd server whose agent uses it. */
export async function startRig(
  wire: Wire,
  options: {
    provider?: string;
    model?: Record<string, unknown>;
    agent?: Record<string, unknown>;
    store?: StoreKind;
    runtime?: Record<string, unknown>;
  } = {},
): Promise<ReplayRig> {
  const replay = startReplayServer(wire);
  const model = modelBlock(options.provider ?? PROVIDER[wire], replay, options.model);
  const agent = { name: "replay", model, ...options.agent };
  const t = await startTestServer({
    store: options.store,
    manifest: {
      agent,
      http_server: { protocol: { ag_ui: {}, ai_sdk: {}, a2a: {} } },
      ...(options.runtime ? { runtime: options.runtime } : {}),
    },
  });
  return {
    t,
    replay,
    async [Symbol.asyncDispose]() {
      await t[Symbol.asyncDispose]();
      await replay.close();
    },
  };
}

/** A user message in the native shape. */
export const user = (value: string) => ({ role: "user", content: [{ type: "text", value }] });

/** Starts a native run and reads its whole event stream. */
export async function run(t: TestServer, body: Record<string, unknown>): Promise<EventData[]> {
  const res = await t.fetch("/v1/runs", { method: "POST", json: body });
  assert.equal(res.status, 200, await res.clone().text());
  return await readEvents(res);
}

/** The stored messages of a session, oldest first. */
export async function storedMessages(
  t: TestServer,
  sessionId: string,
): Promise<Record<string, unknown>[]> {
  const res = await t.fetch(`/v1/sessions/${sessionId}/messages?per_page=100`);
  assert.equal(res.status, 200);
  return (await res.json()).items;
}

/** A run record. */
export async function runRecord(t: TestServer, runId: string): Promise<Record<string, unknown>> {
  const res = await t.fetch(`/v1/runs/${runId}`);
  assert.equal(res.status, 200);
  return await res.json();
}

/** A client tool without parameters, as a run request declares it. */
export const clientTool = (name: string) => ({
  name,
  description: name,
  parameters: { type: "object", properties: {} },
});

/**
 * Runs the agent once through AG-UI with the official client (`HttpAgent`): the events it saw,
 * each stream held to the wire rules of the AG-UI tests.
 */
export async function agUiRun(
  t: TestServer,
  text: string,
  tools: Record<string, unknown>[] = [],
): Promise<WireEvent[]> {
  const recorder = new RecordingFetch();
  const agent = new HttpAgent({ url: `${t.url}/ag-ui/run`, fetch: recorder.fetch });
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  const events: WireEvent[] = [];
  const onEvent = ({ event }: { event: unknown }) => {
    events.push(event as WireEvent);
  };
  try {
    // deno-lint-ignore no-explicit-any
    await agent.runAgent({ tools: tools as any }, { onEvent });
  } catch (error) {
    // A failed run ends with RUN_ERROR, which the client raises once it has passed it on.
    if (!events.some((e) => e.type === "RUN_ERROR")) throw error;
  }
  await recorder.checkAll();
  return events;
}

/** What one recording did on every layer (see `onEveryLayer`). */
export interface Layers {
  /** The native run's events, `run_finished` last. */
  events: EventData[];
  /** Its `run_finished`. */
  end: EventData;
  /** The session's stored messages after the native run. */
  stored: Record<string, unknown>[];
  /** The native run's record. */
  record: Record<string, unknown>;
  /** The events of the same recording run again through AG-UI (`@ag-ui/client`). */
  agUi: WireEvent[];
}

/** The text of a native stream's `text_message_content` events. */
export const nativeText = (events: EventData[]) =>
  events.filter((e) => e.kind === "text_message_content").map((e) => e.delta).join("");

/**
 * Runs the agent natively on session `body.session_id`, then once more through AG-UI (the replay
 * server must hold an answer for each), and checks that the layers agree: the run record has the
 * stream's status, error, usage and finish reason; the stored assistant messages hold the text
 * the stream said; AG-UI ends as the native run did (`RUN_ERROR` with its code for a failed run,
 * `RUN_FINISHED` otherwise) after the same text.
 */
export async function onEveryLayer(
  t: TestServer,
  body: Record<string, unknown> & { session_id: string },
  agUiTools: Record<string, unknown>[] = [],
): Promise<Layers> {
  const events = await run(t, body);
  const end = events.at(-1)!;
  assert.equal(end.kind, "run_finished");
  const record = await runRecord(t, end.run_id as string);
  assert.equal(record.status, end.status);
  assert.deepEqual(record.error ?? null, end.error ?? null);
  assert.deepEqual(record.usage, end.usage ?? null);
  assert.equal(record.finish_reason, end.finish_reason ?? null);
  const stored = await storedMessages(t, body.session_id);
  const storedText = stored.filter((m) => m.role === "assistant" && m.run_id === end.run_id)
    .flatMap((m) => m.content as { type: string; value?: unknown }[])
    .filter((p) => p.type === "text").map((p) => p.value).join("");
  assert.equal(storedText, nativeText(events), "the store holds what was streamed");

  const agUi = await agUiRun(t, "again", agUiTools);
  const agText = agUi.filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => (e as { delta?: string }).delta).join("");
  assert.equal(agText, nativeText(events), "AG-UI shows the same text");
  const last = agUi.at(-1) as { type: string; code?: string };
  if (end.status === "failed") {
    assert.equal(last.type, "RUN_ERROR");
    assert.equal(last.code, (end.error as { code: string }).code);
  } else {
    assert.equal(last.type, "RUN_FINISHED");
  }
  return { events, end, stored, record, agUi };
}
