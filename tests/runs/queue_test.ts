/**
 * The attached stream's queue is bounded: a producer gets `false` from a full queue and waits for
 * room; and over HTTP, a client that stops reading holds back its run for at most
 * `runtime.attached.drain_timeout`, is then dropped with the `slow_consumer` notice, and the run
 * completes without it.
 */
import assert from "node:assert/strict";
import { AsyncQueue } from "../../src/runs/queue.ts";
import { eventually, readSse, startTestServer } from "../_kit/mod.ts";

Deno.test("queue: full at capacity, room once the consumer takes, order kept", async () => {
  const queue = new AsyncQueue<number>(2);
  assert.equal(queue.push(1), true);
  assert.equal(queue.push(2), true);
  assert.equal(queue.push(3), false, "a full queue refuses");
  assert.equal(queue.size, 2);
  assert.equal(await queue.room(1), false, "no room while nobody reads");

  const iterator = queue[Symbol.asyncIterator]();
  const room = queue.room(60_000);
  assert.deepEqual(await iterator.next(), { value: 1, done: false });
  assert.equal(await room, true, "taking an item makes room at once");
  assert.equal(queue.push(3), true);
  assert.equal(queue.push(4), false);

  queue.end(99);
  assert.equal(queue.push(5), true, "an ended queue drops what is pushed");
  const rest = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    rest.push(next.value);
  }
  assert.deepEqual(rest, [2, 3, 99], "the end item comes last, even beyond the capacity");
});

Deno.test("queue: a consumer that goes away releases a waiting producer", async () => {
  const queue = new AsyncQueue<string>(1);
  queue.push("a");
  const room = queue.room(60_000);
  await queue[Symbol.asyncIterator]().return!();
  assert.equal(await room, true);
  assert.equal(queue.size, 0, "nothing is held for a consumer that is gone");
  assert.equal(queue.push("b"), true);
  assert.equal(queue.size, 0);
});

Deno.test("an attached client that stops reading is dropped; its run completes", async () => {
  await using t = await startTestServer({
    manifest: { runtime: { attached: { buffer: 16, drain_timeout: 300 } } },
  });
  // 50,000 tokens of ~160 bytes each: more than twice what loopback socket buffers took from a
  // client that does not read (~20,000), so the stream's queue fills.
  const words = Array.from({ length: 50_000 }, (_, i) => `w${i}`).join(" ");
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: { messages: [{ role: "user", content: [{ type: "text", value: words }] }] },
  });
  assert.equal(res.status, 200);
  const runId = res.headers.get("x-run-id")!;
  // Read nothing more: the run fills the queue, waits `drain_timeout`, drops this client and
  // goes on.
  await eventually(async () => {
    const run = await (await t.fetch(`/v1/runs/${runId}`)).json();
    return run.status === "completed";
  }, { timeout: 60_000, what: "the run to complete without its client" });
  assert.ok(t.logs.some((line) => line.includes("attached client dropped")));

  const sse = readSse(res);
  const frames = await sse.all();
  const tokens = frames.filter((f) => f.event === "text_message_content").length;
  assert.ok(tokens > 0 && tokens < 50_000, `the dropped client got ${tokens} tokens`);
  assert.ok(!frames.some((f) => f.event === "run_finished"));
  assert.equal(sse.comments.at(-1)?.text, "stream ended: slow_consumer");
  const messages = await (await t.fetch(`/v1/runs/${runId}`)).json();
  assert.equal((messages.result.text as string).split(" ").length, 50_000);
});
