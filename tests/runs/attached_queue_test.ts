/**
 * Attached runs beyond `runtime.runs.max_concurrent` with `attached_at_capacity = "wait"` (the
 * default): the stream opens at once with `run_queued`, keep-alives hold it while the run waits,
 * and the run's events follow once a slot frees, on the native API and through the official AG-UI
 * client. A client that goes away while its run waits cancels it (`on_disconnect = "cancel"`, after
 * its re-attach grace).
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import {
  eventually,
  pacedModel,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
  userText,
} from "../_kit/mod.ts";
import { checkStream } from "../protocols/ag_ui/helpers.ts";

const delay = (ms: number) => ({
  model: pacedModel(ms),
});
const manifest = {
  runtime: { runs: { max_concurrent: 1 } },
  // Keep-alives often enough that the wait shows some.
  http_server: { keepalive: 50, protocol: { ag_ui: {} } },
};

/** Starts a detached run that holds the only slot until it is cancelled. */
async function holdSlot(t: TestServer): Promise<string> {
  const res = await t.fetch("/v1/runs/start", {
    method: "POST",
    json: { messages: [userText("one two three four five six")], ...delay(5_000) },
  });
  assert.equal(res.status, 202);
  const { run_id } = await res.json();
  await eventually(() => t.server.runs.activeCount === 1, { what: "the slot taken" });
  return run_id;
}

async function freeSlot(t: TestServer, runId: string): Promise<void> {
  assert.ok((await t.fetch(`/v1/runs/${runId}/cancel`, { method: "PUT" })).ok);
}

async function runStatus(t: TestServer, runId: string): Promise<string> {
  return (await (await t.fetch(`/v1/runs/${runId}`)).json()).status;
}

for (const store of storeKinds) {
  Deno.test(`attached queue (${store}): native stream waits with run_queued and keep-alives`, async () => {
    await using t = await startTestServer({ store, manifest });
    const holder = await holdSlot(t);
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: { messages: [userText("hello queue")], ...delay(1) },
    });
    assert.equal(res.status, 200);
    const runId = res.headers.get("x-run-id")!;
    await using sse = readSse(res);
    const first = (await sse.next()).value!;
    assert.equal(first.event, "run_queued");
    assert.equal(first.id, undefined, "run_queued has no cursor");
    const queued = JSON.parse(first.data);
    assert.equal(queued.run_id, runId);
    assert.equal(queued.queue_depth, 1);
    assert.equal(await runStatus(t, runId), "queued");
    // Keep-alives while it waits, then the slot frees and the run goes on in the same stream.
    const readRest = sse.json<{ kind: string; status?: string }>();
    await eventually(() => sse.comments.some((c) => c.text === "keep-alive"), {
      what: "a keep-alive while queued",
    });
    assert.equal(await runStatus(t, runId), "queued");
    await freeSlot(t, holder);
    const rest = (await readRest).slice(1);
    assert.equal(rest[0].kind, "run_started");
    assert.equal(rest.at(-1)?.kind, "run_finished");
    assert.equal(rest.at(-1)?.status, "completed");
    assert.ok(rest.some((e) => e.kind === "text_message_content"));
    assert.equal(await runStatus(t, runId), "completed");
  });

  Deno.test(`attached queue (${store}): a client gone while queued cancels its run`, async () => {
    // Its client has a short grace to come back (runtime.attached.reattach_grace).
    await using t = await startTestServer({
      store,
      manifest: {
        ...manifest,
        runtime: { ...manifest.runtime, attached: { reattach_grace: 100 } },
      },
    });
    const holder = await holdSlot(t);
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: { messages: [userText("never mind")], ...delay(1) },
    });
    const runId = res.headers.get("x-run-id")!;
    const sse = readSse(res);
    assert.equal((await sse.next()).value?.event, "run_queued");
    await sse.cancel();
    await eventually(async () => await runStatus(t, runId) === "cancelled", {
      what: "the queued run cancelled",
    });
    await freeSlot(t, holder);
    await eventually(() => t.server.runs.activeCount === 0, { what: "the slot freed" });
    assert.equal(await runStatus(t, runId), "cancelled");
  });
}

Deno.test("attached queue: the official AG-UI client waits through run_queued", async () => {
  await using t = await startTestServer({ manifest });
  let holder = await holdSlot(t);
  // (No recording fetch: a teed body reaches the client only at its end.)
  const agent = new HttpAgent({ url: `${t.url}/ag-ui/run` });
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "hello queue" });
  const events: { type: string; name?: string; value?: unknown }[] = [];
  const done = agent.runAgent({ forwardedProps: delay(1) }, {
    onEvent: ({ event }) => void events.push(event as (typeof events)[number]),
  });
  await eventually(() => events.length >= 2, { what: "the stream opened while queued" });
  assert.deepEqual(events.map((e) => e.type), ["RUN_STARTED", "CUSTOM"]);
  assert.deepEqual(events[1], { ...events[1], name: "run_queued", value: { queueDepth: 1 } });
  await freeSlot(t, holder);
  await done;
  assert.equal(events.filter((e) => e.type === "RUN_STARTED").length, 1);
  assert.equal(events.at(-1)?.type, "RUN_FINISHED");
  assert.equal(agent.messages.filter((m) => m.role === "assistant").length, 1);

  // The wire of such a stream holds to the protocol's rules.
  holder = await holdSlot(t);
  const res = await t.fetch("/ag-ui/run", {
    method: "POST",
    json: {
      threadId: crypto.randomUUID(),
      runId: crypto.randomUUID(),
      messages: [{ id: crypto.randomUUID(), role: "user", content: "hello again" }],
      forwardedProps: delay(1),
      state: {},
      tools: [],
      context: [],
    },
  });
  assert.equal(res.status, 200);
  const wire = res.text();
  await freeSlot(t, holder);
  const checked = checkStream(await wire);
  assert.deepEqual(checked.slice(0, 2).map((e) => e.type), ["RUN_STARTED", "CUSTOM"]);
  assert.equal(checked.at(-1)?.type, "RUN_FINISHED");
});
