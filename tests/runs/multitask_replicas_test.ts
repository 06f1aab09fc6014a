/**
 * Double texting across replicas: two server processes on one PostgreSQL schema and one Redis,
 * the session's run executed by A and the second request sent to B, for `steer`, `interrupt` and
 * `enqueue` (answered at once, started by either replica once A's run ended).
 */
import assert from "node:assert/strict";
import type { Message } from "../../src/api/schemas.ts";
import {
  dropSchema,
  eventually,
  pacedModel,
  readSse,
  skipNotice,
  slowTest,
  startServerProcess,
  testPostgresUrl,
  testRedisUrl,
  uniqueName,
  userText,
} from "../_kit/mod.ts";

const enabled = Boolean(testPostgresUrl && testRedisUrl);
if (!enabled) skipNotice("the multitask replica suite", "the PostgreSQL and Redis URLs");

const LONG = Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(" ");
const paced = pacedModel(60);

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}/v1/runs/start`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 202, await res.clone().text());
  return await res.json();
}

async function get<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`);
  assert.equal(res.status, 200, path);
  return await res.json() as T;
}

const textOf = (m: Message) =>
  m.content.map((p) => p.type === "text" ? p.value : "").join("").trim();

slowTest({
  name: "multitask strategies across replicas",
  ignore: !enabled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (tt) => {
  const schema = uniqueName("agentd_multitask");
  await using cleanup = new AsyncDisposableStack();
  cleanup.defer(() => dropSchema(schema));
  const manifest = {
    agent: { name: "multitask", model: { provider: "echo" } },
    runtime: {
      storage: { url: testPostgresUrl, schema },
      pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") },
      replica: { heartbeat_interval: 200, lease: 1500, poll_interval: 100 },
      log_level: "info",
    },
    http_server: { host: "127.0.0.1", port: 0 },
  };
  const replica = (name: string) =>
    startServerProcess({ manifest, name, env: { AGENT__REPLICA__ID: name } });
  await using a = await replica("replica-a");
  await using b = await replica("replica-b");

  /** A long run started on A, its answer streaming (seen from B). */
  const busy = async (session: string) => {
    const first = await post(a.url, {
      session_id: session,
      messages: [userText(LONG)],
      model: paced,
    });
    await using sse = readSse(await fetch(`${b.url}/v1/runs/${first.run_id}/events?after=0`));
    await sse.until("text_message_content");
    return first.run_id as string;
  };
  const conversation = async (session: string) =>
    (await get<{ items: Message[] }>(b.url, `/v1/sessions/${session}/messages`)).items;

  await tt.step("steer sent to B joins the run A executes", async () => {
    const runId = await busy("x-steer");
    const joined = await post(b.url, {
      session_id: "x-steer",
      messages: [userText("and also this")],
      multitask_strategy: "steer",
    });
    assert.deepEqual(joined, { run_id: runId, session_id: "x-steer", steered: true });
    await eventually(async () =>
      (await get<{ status: string }>(a.url, `/v1/runs/${runId}`)).status === "completed"
    );
    const messages = await conversation("x-steer");
    assert.deepEqual(messages.map((m) => [m.role, textOf(m), m.run_id]), [
      ["user", LONG, runId],
      ["assistant", LONG, runId],
      ["user", "and also this", runId],
      ["assistant", "and also this", runId],
    ]);
  });

  await tt.step("interrupt sent to B cancels the run A executes, its progress kept", async () => {
    const runId = await busy("x-interrupt");
    const second = await post(b.url, {
      session_id: "x-interrupt",
      messages: [userText("instead")],
      multitask_strategy: "interrupt",
    });
    assert.equal((await get<{ status: string }>(a.url, `/v1/runs/${runId}`)).status, "cancelled");
    await eventually(async () =>
      (await get<{ status: string }>(a.url, `/v1/runs/${second.run_id}`)).status === "completed"
    );
    const messages = await conversation("x-interrupt");
    assert.deepEqual(messages.map((m) => m.run_id), [runId, runId, second.run_id, second.run_id]);
    assert.ok(LONG.startsWith(textOf(messages[1])) && textOf(messages[1]) !== LONG);
  });

  await tt.step("enqueue sent to B starts once the run A executes ended", async () => {
    const runId = await busy("x-enqueue");
    const later = [];
    for (const word of ["next", "then"]) {
      later.push(
        await post(b.url, {
          session_id: "x-enqueue",
          messages: [userText(word)],
          multitask_strategy: "enqueue",
        }),
      );
    }
    // Answered at once, stored queued: the run on A still runs.
    for (const run of later) assert.equal(run.status, "queued");
    assert.equal((await get<{ status: string }>(a.url, `/v1/runs/${runId}`)).status, "running");
    // Either replica takes them once it ended, one after the other.
    for (const run of later) {
      await eventually(async () =>
        (await get<{ status: string }>(a.url, `/v1/runs/${run.run_id}`)).status === "completed"
      );
    }
    assert.equal((await get<{ status: string }>(b.url, `/v1/runs/${runId}`)).status, "completed");
    const messages = await conversation("x-enqueue");
    assert.deepEqual(messages.map(textOf), [LONG, LONG, "next", "next", "then", "then"]);
    assert.deepEqual(messages.slice(2).map((m) => m.run_id), [
      later[0].run_id,
      later[0].run_id,
      later[1].run_id,
      later[1].run_id,
    ]);
  });
});
