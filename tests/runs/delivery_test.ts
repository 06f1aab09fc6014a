/**
 * Delivery of a run's events (runs/delivery.ts): numbered in order with timestamps that never go
 * backwards, the events of one turn of the event loop kept and published as one message, the
 * history sealed after `run_finished`, a chain's turns published on the chain's channel too, the
 * end of a lost run appended next or published live; and over HTTP, a client that stops reading
 * holds back its run for at most `runtime.attached.drain_timeout`, is then dropped with the
 * `slow_consumer` notice, and the run completes without it.
 */
import assert from "node:assert/strict";
import {
  encodeEvent,
  makeEvent,
  type RunEvent,
  type SequencedEvent,
} from "../../src/api/events.ts";
import { createLogger } from "../../src/log.ts";
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import type { PubSub } from "../../src/pubsub/mod.ts";
import { chainChannel } from "../../src/runs/chains.ts";
import { Delivery } from "../../src/runs/delivery.ts";
import { decodeRunMessage, runChannel } from "../../src/runs/channel.ts";
import { eventually, readSse, startTestServer, uniqueName } from "../_kit/mod.ts";
import { activeRun } from "./active_run.ts";

/** A memory pub/sub that records the calls delivery makes, in order. */
function recording(): { pubsub: PubSub; calls: string[] } {
  const inner = createMemoryPubSub({ capacity: 1024, prefix: uniqueName("delivery") });
  const calls: string[] = [];
  const pubsub: PubSub = {
    ...inner,
    kind: inner.kind,
    publish: (channel, message) => {
      calls.push(`publish ${channel} ${message}`);
      return inner.publish(channel, message);
    },
    append: (channel, entries, message) => {
      calls.push(`append ${channel} ${entries.map((e) => e.seq).join(",")}`);
      return inner.append(channel, entries, message);
    },
    seal: (channel) => {
      calls.push(`seal ${channel}`);
      return inner.seal(channel);
    },
    history: (channel, after) => inner.history(channel, after),
    subscribe: (channel) => inner.subscribe(channel),
    close: () => inner.close(),
  };
  return { pubsub, calls };
}

const log = createLogger("error", {}, () => {});
const limits = { buffer: 4, drain_timeout: 50 };

const text = (delta: string, timestamp?: number): RunEvent => {
  const event = makeEvent("text_message_content", { message_id: "m1", delta });
  return timestamp === undefined ? event : { ...event, timestamp };
};

Deno.test("delivery: numbered in order, timestamps never go back, one message per turn", async () => {
  const { pubsub, calls } = recording();
  const delivery = new Delivery(pubsub, log, limits);
  const active = activeRun({ attached: delivery.attachedQueue() });
  const channel = runChannel(active.run_id);
  const sub = await pubsub.subscribe(channel);

  assert.equal(delivery.deliver(active, text("a", 100)), undefined, "room in the queue: no wait");
  delivery.deliver(active, text("b", 50));
  delivery.deliver(active, text("c", 200));
  // Nothing leaves before the end of the turn; then one append and one message for the three.
  assert.deepEqual(calls, []);
  await active.recorded.promise;
  assert.deepEqual(calls, [`append ${channel} 1,2,3`]);
  const live = decodeRunMessage((await sub[Symbol.asyncIterator]().next()).value);
  assert.deepEqual(live.map((i) => i.seq), [1, 2, 3]);
  assert.deepEqual(live.map((i) => i.event.timestamp), [100, 100, 200], "never earlier");

  // The attached client got the same items.
  active.attached!.end();
  const attached: SequencedEvent[] = [];
  for await (const item of active.attached!) if ("seq" in item) attached.push(item);
  assert.deepEqual(attached.map((i) => [i.seq, (i.event as { delta: string }).delta]), [
    [1, "a"],
    [2, "b"],
    [3, "c"],
  ]);
  sub.close();
  await pubsub.close();
});

Deno.test("delivery: run_finished seals the history; a chain's turn goes out on the chain", async () => {
  const { pubsub, calls } = recording();
  const delivery = new Delivery(pubsub, log, limits);
  const active = activeRun({ chain: "origin-1" });
  delivery.deliver(active, text("x"));
  delivery.deliver(
    active,
    makeEvent("run_finished", {
      session_id: "s1",
      run_id: active.run_id,
      status: "completed",
      interrupt_payload: null,
      result: null,
      error: null,
    }),
  );
  delivery.flush();
  const channel = runChannel(active.run_id);
  assert.deepEqual(calls.map((c) => c.split(" ").slice(0, 2).join(" ")), [
    `append ${channel}`,
    `seal ${channel}`,
    `publish ${chainChannel("origin-1")}`,
  ]);
  const page = await pubsub.history(channel, 0);
  assert.deepEqual(page?.entries.map((e) => e.seq), [1, 2]);
  await pubsub.close();
});

Deno.test("delivery: a lost run's end is next in its history, or live when none is kept", async () => {
  const { pubsub } = recording();
  const delivery = new Delivery(pubsub, log, limits);
  const active = activeRun();
  delivery.deliver(active, text("x"));
  delivery.deliver(active, text("y"));
  delivery.flush();
  const end = (runId: string) =>
    makeEvent("run_finished", {
      session_id: "s1",
      run_id: runId,
      status: "interrupted",
      interrupt_payload: null,
      result: null,
      error: { code: "replica_lost", message: "lost" },
    });

  const kept = JSON.parse(await delivery.endLost(active.run_id, end(active.run_id)));
  assert.equal(kept.seq, 3);
  const page = await pubsub.history(runChannel(active.run_id), 2);
  assert.deepEqual(page?.entries.map((e) => e.seq), [3]);

  const other = uniqueName("run");
  const sub = await pubsub.subscribe(runChannel(other));
  const live = JSON.parse(await delivery.endLost(other, end(other)));
  assert.equal(live.seq, null, "no history here: live only, outside the sequence");
  assert.deepEqual(JSON.parse((await sub[Symbol.asyncIterator]().next()).value).seq, null);
  sub.close();
  await pubsub.close();
});

Deno.test("delivery: a full attached queue holds the run, then drops the client", async () => {
  const { pubsub } = recording();
  const delivery = new Delivery(pubsub, log, { buffer: 2, drain_timeout: 30 });
  const active = activeRun({ attached: delivery.attachedQueue() });
  const queue = active.attached!;
  delivery.deliver(active, text("1"));
  delivery.deliver(active, text("2"));
  const wait = delivery.deliver(active, text("3"));
  assert.ok(wait instanceof Promise, "a full queue makes the run wait for its client");
  await wait;
  assert.equal(active.attached, undefined, "dropped after drain_timeout");
  const items = [];
  for await (const item of queue) items.push(item);
  assert.deepEqual(items.at(-1), { notice: "slow_consumer" });
  assert.equal(delivery.deliver(active, text("4")), undefined, "the run goes on without it");
  delivery.flush();
  await pubsub.close();
});

Deno.test("delivery: the attached queue is bounded in bytes as well as in events", async () => {
  const { pubsub } = recording();
  const delivery = new Delivery(pubsub, log, {
    buffer: 1000,
    drain_timeout: 30,
    max_unread_bytes: 4096,
  });
  const active = activeRun({ attached: delivery.attachedQueue() });
  const big = "x".repeat(3000);
  assert.equal(delivery.deliver(active, text(big)), undefined);
  assert.equal(delivery.deliver(active, text(big)), undefined, "under 4096 bytes before it");
  const wait = delivery.deliver(active, text(big));
  assert.ok(wait instanceof Promise, "past the bytes the run waits, 3 events of 1000 in");
  await wait;
  assert.equal(active.attached, undefined, "then the client is dropped");
  delivery.flush();
  await pubsub.close();
});

Deno.test("delivery over HTTP: an attached client that stops reading is dropped; its run completes", async () => {
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

Deno.test("delivery: a run whose lease is in doubt holds its events until it is renewed", async () => {
  const { pubsub } = recording();
  const delivery = new Delivery(pubsub, log, limits, 1_000);
  // Last known to be ours 2 s ago: this replica was paused longer than the lease.
  const active = activeRun({ leaseAt: performance.now() - 2_000 });
  delivery.deliver(active, text("x"));
  await delivery.flush();
  const channel = runChannel(active.run_id);
  assert.equal(await pubsub.history(channel, 0), null, "nothing goes out while in doubt");
  // A heartbeat says the run is still ours: what was held goes out, in order.
  active.leaseAt = performance.now();
  delivery.deliver(active, text("y"));
  await delivery.flush();
  assert.deepEqual((await pubsub.history(channel, 0))?.entries.map((e) => e.seq), [1, 2]);
  // Fenced instead: held events are dropped, never published.
  const lost = activeRun({ leaseAt: performance.now() - 2_000 });
  delivery.deliver(lost, text("z"));
  await delivery.flush();
  lost.reason = "fenced";
  await delivery.flush();
  assert.equal(await pubsub.history(runChannel(lost.run_id), 0), null);
  await pubsub.close();
});

Deno.test("delivery: a large event read back from its channel is not encoded again", () => {
  const event = text("y".repeat(100_000));
  const message = `{"seq":3,"event":${JSON.stringify(event)}}`;
  const [item] = decodeRunMessage(message);
  assert.equal(item.seq, 3);
  assert.deepEqual(item.event, event);
  // Encoding it again would call JSON.stringify: count the calls.
  const stringify = JSON.stringify;
  let calls = 0;
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    calls++;
    return stringify(...args);
  }) as typeof stringify;
  let json;
  try {
    json = encodeEvent(item.event);
  } finally {
    JSON.stringify = stringify;
  }
  assert.equal(calls, 0, "taken from the message");
  assert.equal(json, JSON.stringify(item.event), "the same text");
});
