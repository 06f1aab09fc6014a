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
export async function agUiRun(t: TestServer, text: string): Promise<WireEvent[]> {
  const recorder = new RecordingFetch();
  const agent = new HttpAgent({ url: `${t.url}/ag-ui/run`, fetch: recorder.fetch });
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  const events: WireEvent[] = [];
  await agent.runAgent({}, {
    onEvent: ({ event }) => {
      events.push(event as WireEvent);
    },
  });
  await recorder.checkAll();
  return events;
}
