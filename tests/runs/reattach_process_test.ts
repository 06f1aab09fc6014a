/**
 * Two server processes on one SQLite file with the in-process `memory` pub/sub: a re-attach on
 * the process that does not execute the run cannot hear its events, and must still end when the
 * run ends (with the end read from the store), never stay open on keep-alives.
 */
import assert from "node:assert/strict";
import {
  assertError,
  pacedModel,
  readSse,
  slowTest,
  startServerProcess,
  tempDir,
  userText,
} from "../_kit/mod.ts";

slowTest({
  name: "re-attach on another process with memory pub/sub ends when the run ends",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using dir = await tempDir("agentd_reattach_");
  const manifest = {
    agent: { name: "reattach", model: { provider: "echo" } },
    runtime: {
      storage: { path: dir.join("agent.db") },
      pubsub: { kind: "memory" },
      replica: { heartbeat_interval: 200, lease: 5_000, poll_interval: 100 },
      log_level: "info",
    },
    // Keep-alives far more often than the run lasts: a stream that only kept alive would show.
    http_server: { keepalive: 100 },
  };
  await using a = await startServerProcess({ manifest, name: "process-a" });
  await using b = await startServerProcess({ manifest, name: "process-b" });

  const started = await fetch(`${a.url}/v1/runs/start`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      messages: [userText("one two three four five six seven eight nine ten")],
      model: pacedModel(100),
    }),
  });
  assert.equal(started.status, 202);
  const { run_id } = await started.json();

  // B keeps no history of A's run (its memory pub/sub is A's process's): a cursor is refused.
  await assertError(
    await fetch(`${b.url}/v1/runs/${run_id}/events`, { headers: { "last-event-id": "1" } }),
    410001,
  );

  // A safety net against a hanging stream, not a timing assertion.
  const res = await fetch(`${b.url}/v1/runs/${run_id}/events`, {
    signal: AbortSignal.timeout(60_000),
  });
  assert.equal(res.status, 200);
  const stream = readSse(res);
  const events = await stream.all();
  // B hears none of A's events; the stream ends with the run's end as the store has it.
  assert.deepEqual(events.map((e) => e.event), ["run_finished"]);
  const end = JSON.parse(events[0].data);
  assert.equal(end.status, "completed");
  assert.deepEqual(end.result, {
    text: "one two three four five six seven eight nine ten",
    context: null,
  });
  assert.equal(events[0].id, undefined, "an end read from the store has no place in the sequence");
  assert.ok(stream.comments.some((c) => c.text === "keep-alive"), "kept alive meanwhile");
  const run = await (await fetch(`${b.url}/v1/runs/${run_id}`)).json();
  assert.equal(run.status, "completed");
});
