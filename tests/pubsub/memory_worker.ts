/**
 * A Worker (another isolate) for memory_test.ts: subscribes through its own memory PubSub,
 * reports what arrives to the test, and echoes it back on `<channel>:echo`.
 */
// memory.ts directly, not mod.ts: the worker then loads (and type-checks) no npm clients.
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import type { PubSub } from "../../src/pubsub/types.ts";

const scope = self as unknown as {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: string): void;
};
let pubsub: PubSub | undefined;

scope.onmessage = async (event: MessageEvent) => {
  if (event.data === "close") {
    await pubsub?.close();
    scope.postMessage("closed");
    return;
  }
  const { prefix, channel } = event.data as { prefix: string; channel: string };
  pubsub = createMemoryPubSub({ capacity: 64, prefix });
  const sub = await pubsub.subscribe(channel);
  scope.postMessage("subscribed");
  for await (const message of sub) {
    scope.postMessage(`got:${message}`);
    await pubsub.publish(`${channel}:echo`, `echo:${message}`);
  }
};
