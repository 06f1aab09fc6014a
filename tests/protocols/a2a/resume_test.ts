/**
 * A task stream resumed from a cursor: a stream dropped at a random frame of a long answer is
 * picked up with `Last-Event-ID`, on the memory and the Redis pub/sub, over both bindings
 * (`tasks/{id}:subscribe` on HTTP+JSON, `SubscribeToTask` on JSON-RPC); a task that ended within
 * the retention window gives its remaining frames.
 */
import assert from "node:assert/strict";
import {
  readSse,
  type SseEvent,
  startTestServer,
  testRedisUrl,
  type TestServer,
  uniqueName,
} from "../../_kit/mod.ts";
import { randomCut, WORDS } from "../../runs/long_run.ts";

const pubsubs: [string, Record<string, unknown> | null][] = [
  ["memory", {}],
  ["redis", testRedisUrl ? { kind: "redis", url: testRedisUrl } : null],
];

/** A frame's `StreamResponse` (a JSON-RPC frame holds it as its `result`). */
function updateOf(frame: SseEvent) {
  const data = JSON.parse(frame.data);
  return data.jsonrpc ? data.result : data;
}

/** The text of the artifact chunks among `frames`. */
function textOf(frames: SseEvent[]): string {
  return frames.map((f) => updateOf(f).artifactUpdate?.artifact.parts[0].text ?? "").join("");
}

/** A JSON-RPC request to the binding's endpoint. */
function rpc(t: TestServer, method: string, params: unknown, headers: HeadersInit = {}) {
  return t.fetch("/a2a", {
    method: "POST",
    headers,
    json: { jsonrpc: "2.0", id: 1, method, params },
  });
}

/** Starts a streamed task of the long answer and reads its first frame (the task). */
async function streamTask(t: TestServer) {
  const res = await t.fetch("/a2a/message:stream", {
    method: "POST",
    json: {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: WORDS }] },
    },
  });
  assert.equal(res.status, 200);
  const stream = readSse(res);
  const task = JSON.parse((await stream.until(() => true)).data).task.id as string;
  return { stream, task };
}

for (const [label, pubsub] of pubsubs) {
  Deno.test(
    { name: `A2A subscribe from a cursor (${label} pub/sub)`, ignore: pubsub === null },
    async (tt) => {
      await using t = await startTestServer({
        manifest: {
          runtime: { pubsub: { ...pubsub, prefix: uniqueName("a2a_resume") } },
          http_server: { protocol: { a2a: {} } },
        },
      });

      await tt.step("a stream dropped at a random frame resumes where it broke", async () => {
        const cut = randomCut(3, 200);
        const { stream, task } = await streamTask(t);
        for (let i = 0; i < cut; i++) assert.ok(!(await stream.next()).done);
        await stream.cancel();
        const cursor = stream.events.at(-1)!.id!;
        const res = await t.fetch(`/a2a/tasks/${task}:subscribe`, {
          method: "POST",
          headers: { "last-event-id": cursor },
        });
        assert.equal(res.status, 200);
        const [snapshot, ...after] = await readSse(res).all();
        assert.equal(snapshot.id, undefined, "the task as it is now: not a frame of the run");
        assert.ok(JSON.parse(snapshot.data).task);
        const frames = [...stream.events.slice(1), ...after];
        const ids = frames.map((f) => f.id);
        assert.equal(new Set(ids).size, ids.length, "no frame twice");
        assert.equal(textOf(frames), WORDS, `dropped after frame ${cut} (cursor ${cursor})`);
        const last = JSON.parse(frames.at(-1)!.data);
        assert.equal(last.statusUpdate.status.state, "TASK_STATE_COMPLETED");

        // The task has ended: a cursor still gives what followed it, then the stream ends.
        const again = await t.fetch(`/a2a/tasks/${task}:subscribe?after=${cursor}`, {
          method: "POST",
        });
        const [, ...rest] = await readSse(again).all();
        assert.deepEqual(rest.map((f) => f.id), after.map((f) => f.id));
        // Without a cursor the A2A rule stands: a terminal task cannot be subscribed to.
        const refused = await t.fetch(`/a2a/tasks/${task}:subscribe`, { method: "POST" });
        assert.equal(refused.status, 400);
        await refused.body?.cancel();
        const bad = await t.fetch(`/a2a/tasks/${task}:subscribe`, {
          method: "POST",
          headers: { "last-event-id": "nope" },
        });
        assert.equal(bad.status, 400);
        assert.match(await bad.text(), /Last-Event-ID/);
      });

      await tt.step("JSON-RPC SubscribeToTask resumes from the same cursor", async () => {
        const cut = randomCut(3, 200);
        const res = await rpc(t, "SendStreamingMessage", {
          message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: WORDS }] },
        });
        assert.equal(res.status, 200);
        const stream = readSse(res);
        const task = updateOf(await stream.until(() => true)).task.id as string;
        for (let i = 0; i < cut; i++) assert.ok(!(await stream.next()).done);
        await stream.cancel();
        const cursor = stream.events.at(-1)!.id!;
        const again = await rpc(t, "SubscribeToTask", { id: task }, { "last-event-id": cursor });
        assert.equal(again.status, 200);
        const [snapshot, ...after] = await readSse(again).all();
        assert.equal(updateOf(snapshot).task.id, task);
        const frames = [...stream.events.slice(1), ...after];
        const ids = frames.map((f) => f.id);
        assert.equal(new Set(ids).size, ids.length, "no frame twice");
        assert.equal(textOf(frames), WORDS, `dropped after frame ${cut} (cursor ${cursor})`);
        assert.equal(updateOf(frames.at(-1)!).statusUpdate.status.state, "TASK_STATE_COMPLETED");

        // The same cursor on the other binding names the same frames.
        const rest = await t.fetch(`/a2a/tasks/${task}:subscribe?after=${cursor}`, {
          method: "POST",
        });
        const [, ...restFrames] = await readSse(rest).all();
        assert.deepEqual(restFrames.map((f) => f.id), after.map((f) => f.id));

        const bad = await rpc(t, "SubscribeToTask", { id: task }, { "last-event-id": "nope" });
        const body = await bad.json();
        assert.equal(body.error.code, -32602);
        assert.match(body.error.message, /Last-Event-ID/);
      });
    },
  );
}
