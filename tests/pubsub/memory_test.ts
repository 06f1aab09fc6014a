/**
 * The memory (BroadcastChannel) transport: the contract, several PubSubs in one process acting
 * as replicas, and delivery to another isolate (a Worker).
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
  try {
    worker.postMessage({ prefix, channel: "run:w" });
    // Generous: a cold start type-checks and loads the worker's modules.
    assert.equal(await nextFromWorker(30_000), "subscribed");
    const replies = await ps.subscribe("run:w:echo");
    await ps.publish("run:w", "hello isolate");
    assert.equal(await nextFromWorker(), "got:hello isolate");
    // And back: the worker echoes on another channel through its own PubSub.
    assert.equal(await nextMessage(replies), "echo:hello isolate");
  } finally {
    worker.postMessage("close");
    assert.equal(await nextFromWorker(), "closed");
    worker.terminate();
    await ps.close();
  }
});

Deno.test("pubsub memory: capacity must be a positive integer", async () => {
  await assert.rejects(
    () => createPubSub({ kind: "memory", capacity: 0, prefix: "x" }),
    /capacity must be a positive integer/,
  );
});
