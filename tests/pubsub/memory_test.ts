/**
 * The memory (BroadcastChannel) transport: the contract, several PubSubs in one process acting
 * as replicas, and delivery to another isolate (a Worker), unless told no other isolate listens.
 */
import assert from "node:assert/strict";
import { createPubSub } from "../../src/pubsub/mod.ts";
import { uniqueName } from "../_kit/mod.ts";
import { definePubSubContract, nextMessage, take, within } from "./contract.ts";

definePubSubContract(
  "memory",
  (config) => createPubSub({ kind: "memory", ...config }),
);

Deno.test("pubsub memory: two PubSubs of one prefix in one process see each other", async () => {
  const prefix = uniqueName("pubsub_mem");
  const a = await createPubSub({ kind: "memory", capacity: 64, prefix });
  const b = await createPubSub({ kind: "memory", capacity: 64, prefix });
  try {
    assert.equal(a.kind, "memory");
    const onB = await b.subscribe("run:1");
    const onA = await a.subscribe("run:1");
    await a.publish("run:1", "from a");
    await b.publish("run:1", "from b");
    assert.deepEqual(await take(onB, 2), ["from a", "from b"]);
    assert.deepEqual(await take(onA, 2), ["from a", "from b"]);
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("pubsub memory: publishes reach a subscriber in another isolate", async () => {
  const prefix = uniqueName("pubsub_mem_worker");
  const worker = new Worker(new URL("./memory_worker.ts", import.meta.url), { type: "module" });
  const fromWorker: string[] = [];
  const waiters: Array<() => void> = [];
  worker.onmessage = (event: MessageEvent<string>) => {
    fromWorker.push(event.data);
    waiters.shift()?.();
  };
  const nextFromWorker = (ms = 5_000) =>
    within(
      new Promise<string>((resolve) => {
        const check = () => fromWorker.length ? resolve(fromWorker.shift()!) : waiters.push(check);
        check();
      }),
      ms,
      "message from the worker",
    );
  const ps = await createPubSub({ kind: "memory", capacity: 64, prefix });
  // A second PubSub of the prefix shares this isolate's bus: closing it leaves the bus open.
  const other = await createPubSub({ kind: "memory", capacity: 64, prefix });
  try {
    await other.close();
    worker.postMessage({ prefix, channel: "run:w" });
    // Generous: a cold start type-checks and loads the worker's modules.
    assert.equal(await nextFromWorker(30_000), "subscribed");
    const replies = await ps.subscribe("run:w:echo");
    await ps.publish("run:w", "hello isolate");
    assert.equal(await nextFromWorker(), "got:hello isolate");
    // And back: the worker echoes on another channel through its own PubSub.
    assert.equal(await nextMessage(replies), "echo:hello isolate");
    // A PubSub told no other isolate subscribes (`main.ts serve`) reaches this isolate only.
    const quiet = await createPubSub({ kind: "memory", capacity: 64, prefix }, {
      otherIsolates: false,
    });
    const here = await quiet.subscribe("run:w");
    await quiet.publish("run:w", "this isolate only");
    await ps.publish("run:w", "every isolate");
    assert.equal(await nextFromWorker(), "got:every isolate");
    assert.deepEqual(await take(here, 2), ["this isolate only", "every isolate"]);
    assert.equal(await nextMessage(replies), "echo:every isolate");
    await quiet.close();
    // A run's last event, sealed at once, still leaves the isolate.
    // Sealed in the same turn, as the run service does after a run's last flush.
    const appended = ps.append("run:w", [{ seq: 2, message: "the end" }], "the end");
    await ps.seal("run:w");
    await appended;
    assert.equal(await nextFromWorker(), "got:the end");
  } finally {
    worker.postMessage("close");
    assert.equal(await nextFromWorker(), "closed");
    worker.terminate();
    await ps.close();
  }
});

Deno.test("pubsub memory: a run that ends leaves the next run's publishing working", async () => {
  // Deno breaks a channel opened as the isolate's last one closes (its later posts throw): the
  // transport's one channel stays open for its lifetime, whatever runs end.
  const errors: unknown[] = [];
  const ps = await createPubSub(
    { kind: "memory", capacity: 64, prefix: uniqueName("mem_seal") },
    { onError: (err) => errors.push(err) },
  );
  try {
    await ps.append("run:a", [{ seq: 1, message: "a" }], "a");
    await ps.seal("run:a");
    // Resumes in the turn that closed run:a's publisher: run:b's opens then.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await ps.publish("run:b", "first");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await ps.publish("run:b", "second");
    assert.deepEqual(errors, []);
  } finally {
    await ps.close();
  }
});

Deno.test("pubsub memory: capacity must be a positive integer", async () => {
  await assert.rejects(
    () => createPubSub({ kind: "memory", capacity: 0, prefix: "x" }),
    /capacity must be a positive integer/,
  );
});
