/**
 * Chains (runs/chains.ts): a follower hears the turns published on a chain's channel from the
 * time it subscribed, and ends with a notice when delivery breaks; cancelling a chain that waits
 * records a run that continues it, `cancelled`, without executing anything, and tells the
 * followers. The A2A add-on's tasks are chains end to end (tests/protocols/a2a/).
 */
import assert from "node:assert/strict";
import { createLogger } from "../../src/log.ts";
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import { cancelChain, chainChannel, followChain } from "../../src/runs/chains.ts";
import { openTestStore, uniqueName } from "../_kit/mod.ts";

const pubsubOf = (capacity = 64) => createMemoryPubSub({ capacity, prefix: uniqueName("chains") });

Deno.test("followChain: the chain's turns from now on, then the end of delivery", async () => {
  const pubsub = pubsubOf(1);
  const follower = await followChain(pubsub, "origin-1");
  const iterator = follower.events[Symbol.asyncIterator]();
  const item = (seq: number) => ({ seq, event: { kind: "custom", timestamp: 1, name: "n" } });
  // One turn's message may hold several events.
  await pubsub.publish(chainChannel("origin-1"), JSON.stringify([item(1), item(2)]));
  assert.deepEqual((await iterator.next()).value, item(1));
  assert.deepEqual((await iterator.next()).value, item(2));
  // A follower that falls behind its capacity is dropped, and told so.
  await pubsub.publish(chainChannel("origin-1"), JSON.stringify(item(3)));
  await pubsub.publish(chainChannel("origin-1"), JSON.stringify(item(4)));
  await pubsub.publish(chainChannel("origin-1"), JSON.stringify(item(5)));
  const rest = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    rest.push(next.value);
  }
  assert.deepEqual(rest.at(-1), { notice: "subscriber_overflow" });
  follower.close();
  await pubsub.close();
});

Deno.test("cancelChain: a cancelled turn is recorded and announced, nothing runs", async () => {
  await using fx = await openTestStore("sqlite", { memory: true });
  const pubsub = pubsubOf();
  const log = createLogger("error", {}, () => {});
  await fx.store.createRun("t1", {
    run_id: "origin-1",
    session_id: "s1",
    parent_checkpoint_id: null,
    owner: "me",
    create_session: true,
  });
  const latest = await fx.store.finishRun("origin-1", {
    status: "interrupted",
    interrupt_payload: { reason: "tool_calls", pending: [] },
  });
  const follower = await followChain(pubsub, "origin-1");
  const deps = { store: fx.store, pubsub, owner: "me", log };
  const run = await cancelChain(deps, "t1", latest, { origin_run_id: "origin-1" });
  assert.equal(run.status, "cancelled");
  assert.equal(run.session_id, "s1");
  assert.equal((await fx.store.runChain("t1", run.run_id))?.origin_run_id, "origin-1");
  const { value } = await follower.events[Symbol.asyncIterator]().next();
  assert.equal(value.seq, null);
  assert.equal(value.event.kind, "run_finished");
  assert.equal(value.event.run_id, run.run_id);
  assert.equal(value.event.status, "cancelled");
  follower.close();
  await pubsub.close();
});
