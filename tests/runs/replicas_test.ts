/**
 * Two real server processes sharing PostgreSQL and Redis, as two replicas behind a load balancer:
 * re-attach across replicas and cancel across replicas. (A replica killed mid-run, on services of
 * its own: tests/faults/reattach_test.ts.)
 */
import assert from "node:assert/strict";
import {
  dropSchema,
  pacedModel,
  readEvents,
  readSse,
  skipNotice,
  slowTest,
  startServerProcess,
  testPostgresUrl,
  testRedisUrl,
  uniqueName,
  userText,
} from "../_kit/mod.ts";
import { longRun, PACED, randomCut, WORDS } from "./long_run.ts";

const enabled = Boolean(testPostgresUrl && testRedisUrl);
if (!enabled) skipNotice("the replica suite", "AGENTD_TEST_POSTGRES_URL and AGENTD_TEST_REDIS_URL");

const LEASE_MS = 1500;

async function start(url: string, body: unknown): Promise<{ run_id: string; session_id: string }> {
  const res = await fetch(`${url}/v1/runs/start`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 202);
  return await res.json();
}

async function status(url: string, runId: string): Promise<Record<string, unknown>> {
  return await (await fetch(`${url}/v1/runs/${runId}`)).json();
}

slowTest({
  name: "replicas share PostgreSQL and Redis",
  ignore: !enabled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (tt) => {
  const schema = uniqueName("agentd_replicas");
  await using cleanup = new AsyncDisposableStack();
  cleanup.defer(() => dropSchema(schema));
  const manifest = {
    // Paced a little (A2A requests carry no model override): streams last long enough to drop.
    agent: {
      name: "replicas",
      model: { provider: "echo", inference_params: { provider_params: { delay_ms: 2 } } },
    },
    runtime: {
      storage: { url: testPostgresUrl, schema },
      pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") },
      replica: {
        heartbeat_interval: 200,
        lease: LEASE_MS,
        poll_interval: 100,
        shutdown_grace: 500,
      },
      log_level: "info",
    },
    http_server: { host: "127.0.0.1", port: 0, protocol: { ag_ui: {}, a2a: {} } },
  };
  const replica = (name: string) =>
    startServerProcess({ manifest, name, env: { AGENT__REPLICA__ID: name } });
  await using a = await replica("replica-a");
  await using b = await replica("replica-b");
  await tt.step("a detached run started on A is re-attached on B", async () => {
    const { run_id } = await start(a.url, {
      messages: [userText("one two three four five six seven eight")],
      model: pacedModel(80),
    });
    const res = await fetch(`${b.url}/v1/runs/${run_id}/events`);
    assert.equal(res.status, 200);
    const events = await readEvents(res);
    assert.ok(events.some((e) => e.kind === "text_message_content"), "B got live tokens");
    assert.equal(events.at(-1)!.kind, "run_finished");
    assert.equal(events.at(-1)!.status, "completed");
    assert.equal((await status(b.url, run_id)).status, "completed");
  });

  await tt.step("a stream dropped on A at a random frame resumes on B by cursor", async () => {
    // Native: an attached run that continues when its client goes.
    {
      const cut = randomCut(3, 200);
      const res = await fetch(`${a.url}/v1/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(longRun({ on_disconnect: "continue" })),
      });
      const first = readSse(res);
      for (let i = 0; i < cut; i++) await first.next();
      await first.cancel();
      const resumed = await fetch(`${b.url}/v1/runs/${res.headers.get("x-run-id")}/events`, {
        headers: { "last-event-id": first.events.at(-1)!.id! },
      });
      const all = [...first.events, ...await readSse(resumed).all()];
      const ids = all.map((e) => Number(e.id));
      assert.equal(new Set(ids).size, ids.length, "no frame twice");
      const text = all.filter((e) => e.event === "text_message_content")
        .map((e) => JSON.parse(e.data).delta).join("");
      assert.equal(text, WORDS, `native, dropped after frame ${cut}`);
    }
    // AG-UI: the run on A, `/connect` on B.
    {
      const cut = randomCut(3, 200);
      const threadId = crypto.randomUUID();
      const res = await fetch(`${a.url}/ag-ui/run`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          threadId,
          runId: crypto.randomUUID(),
          messages: [{ id: crypto.randomUUID(), role: "user", content: WORDS }],
          forwardedProps: { model: PACED, on_disconnect: "continue" },
        }),
      });
      const first = readSse(res);
      for (let i = 0; i < cut; i++) await first.next();
      await first.cancel();
      const resumed = await fetch(`${b.url}/ag-ui/connect`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "last-event-id": first.events.at(-1)!.id!,
        },
        body: JSON.stringify({ threadId, runId: crypto.randomUUID(), messages: [] }),
      });
      const after = (await readSse(resumed).all()).filter((e) => e.id !== undefined);
      const all = [...first.events, ...after];
      const ids = all.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, "no frame twice");
      const text = all.filter((e) => e.event === "TEXT_MESSAGE_CONTENT")
        .map((e) => JSON.parse(e.data).delta).join("");
      assert.equal(text, WORDS, `AG-UI, dropped after frame ${cut}`);
    }
    // A2A: `message:stream` on A, `tasks/{id}:subscribe` on B.
    {
      const cut = randomCut(3, 100);
      const res = await fetch(`${a.url}/a2a/message:stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: WORDS }] },
        }),
      });
      const first = readSse(res);
      const task = JSON.parse((await first.until(() => true)).data).task.id as string;
      for (let i = 0; i < cut; i++) await first.next();
      await first.cancel();
      const resumed = await fetch(`${b.url}/a2a/tasks/${task}:subscribe`, {
        method: "POST",
        headers: { "last-event-id": first.events.at(-1)!.id! },
      });
      // The first frame is the task as it is now; the frames after it continue the stream.
      const after = (await readSse(resumed).all()).slice(1);
      const all = [...first.events.slice(1), ...after];
      const ids = all.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, "no frame twice");
      const text = all.map((e) => JSON.parse(e.data).artifactUpdate?.artifact.parts[0].text ?? "")
        .join("");
      assert.equal(text, WORDS, `A2A, dropped after frame ${cut}`);
    }
  });

  await tt.step("a cancel sent to B stops the run on A within 1 s", async () => {
    const { run_id } = await start(a.url, {
      messages: [userText("a b c d e f g h i j k l m n o p q r s t")],
      model: pacedModel(200),
    });
    // Cancel once A streams tokens.
    const watch = readSse(await fetch(`${a.url}/v1/runs/${run_id}/events`));
    await watch.until("text_message_content");
    const sent = Date.now();
    const res = await fetch(`${b.url}/v1/runs/${run_id}/cancel`, { method: "PUT" });
    assert.equal(res.status, 204);
    const events = (await watch.json()) as { kind: string; status?: string }[];
    const elapsed = Date.now() - sent;
    assert.equal(events.at(-1)!.kind, "run_finished");
    assert.equal(events.at(-1)!.status, "cancelled");
    assert.ok(elapsed < 1000, `A stopped after ${elapsed} ms`);
    assert.equal((await status(a.url, run_id)).status, "cancelled");
  });

  await tt.step("B stops gracefully on SIGTERM", async () => {
    assert.equal((await b.stop()).code, 0, "graceful shutdown exits 0");
  });
});
