/**
 * The Upstash REST transport against `upstash_gateway.ts` (an Upstash-compatible gateway backed
 * by the real Redis): the contract, wire compatibility with `@upstash/redis`'s own subscriber,
 * interplay with the node-redis transport on the same Redis, and losing the REST endpoint.
 */
import assert from "node:assert/strict";
import { Redis } from "@upstash/redis";
import { createPubSub, type PubSub, PubSubError, PubSubUnavailable } from "../../src/pubsub/mod.ts";
import { assertError, eventually, skipNotice, testRedisUrl, uniqueName } from "../_kit/mod.ts";
import { definePubSubContract, nextMessage, take, within } from "./contract.ts";
import { startUpstashGateway, type UpstashGateway } from "./upstash_gateway.ts";

const ignore = !testRedisUrl;
if (ignore) skipNotice("tests/pubsub/upstash_test.ts", "AGENTD_TEST_REDIS_URL");

definePubSubContract(
  "upstash",
  async (config) => {
    // A gateway per PubSub, closed with it, so each test owns (and releases) its own server.
    const gw = await startUpstashGateway({ redisUrl: testRedisUrl! });
    try {
      const ps = await createPubSub({
        kind: "redis",
        url: gw.url,
        token: gw.token,
        ...config,
      });
      return {
        kind: ps.kind,
        publish: (channel, message) => ps.publish(channel, message),
        append: (channel, seq, message) => ps.append(channel, seq, message),
        seal: (channel) => ps.seal(channel),
        history: (channel, after) => ps.history(channel, after),
        subscribe: (channel) => ps.subscribe(channel),
        async close() {
          await ps.close();
          await gw.close();
        },
      };
    } catch (err) {
      await gw.close();
      throw err;
    }
  },
  { ignore },
);

/** Runs `fn` with a gateway of its own. */
async function withGateway(fn: (gw: UpstashGateway) => Promise<void>): Promise<void> {
  const gw = await startUpstashGateway({ redisUrl: testRedisUrl! });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

Deno.test({
  name: "pubsub upstash: @upstash/redis's own subscriber reads the gateway's stream",
  ignore,
  fn: () =>
    withGateway(async (gw) => {
      const prefix = uniqueName("pubsub_wire");
      const ps = await createPubSub({
        kind: "redis",
        url: gw.url,
        token: gw.token,
        capacity: 64,
        prefix,
      });
      const client = new Redis({ url: gw.url, token: gw.token, enableTelemetry: false });
      const subscriber = client.subscribe<string>(`${prefix}:run:wire`);
      try {
        const subscribed = Promise.withResolvers<void>();
        const received = Promise.withResolvers<unknown>();
        subscriber.on("subscribe", () => subscribed.resolve());
        subscriber.on("message", ({ message }) => received.resolve(message));
        await within(subscribed.promise, 5_000, "the library's subscribe confirmation");
        const event = JSON.stringify({ kind: "text_delta", text: "hi, there" });
        await ps.publish("run:wire", event);
        // The library JSON-parses messages by default.
        assert.deepEqual(
          await within(received.promise, 5_000, "library message"),
          JSON.parse(event),
        );
        // And the library's publish reaches our subscriber.
        const ours = await ps.subscribe("run:wire");
        assert.equal(await client.publish(`${prefix}:run:wire`, "from the library"), 2);
        assert.equal(await nextMessage(ours), "from the library");
      } finally {
        await subscriber.unsubscribe();
        await ps.close();
        await eventually(() => gw.openStreams === 0, {
          what: "the gateway to see both streams closed",
        });
      }
    }),
});

Deno.test({
  name: "pubsub upstash: shares channels with the node-redis transport on the same Redis",
  ignore,
  fn: () =>
    withGateway(async (gw) => {
      const prefix = uniqueName("pubsub_mixed");
      const rest = await createPubSub({
        kind: "redis",
        url: gw.url,
        token: gw.token,
        capacity: 64,
        prefix,
      });
      const tcp = await createPubSub({ kind: "redis", url: testRedisUrl, capacity: 64, prefix });
      try {
        const onRest = await rest.subscribe("run:m");
        const onTcp = await tcp.subscribe("run:m");
        await tcp.publish("run:m", "via tcp");
        await rest.publish("run:m", "via rest");
        assert.deepEqual(await take(onRest, 2), ["via tcp", "via rest"]);
        assert.deepEqual(await take(onTcp, 2), ["via tcp", "via rest"]);
      } finally {
        await rest.close();
        await tcp.close();
      }
    }),
});

Deno.test({
  name: "pubsub upstash: publishes queued behind a request leave together, in order",
  ignore,
  fn: () =>
    withGateway(async (gw) => {
      const ps = await createPubSub({
        kind: "redis",
        url: gw.url,
        token: gw.token,
        capacity: 1024,
        prefix: uniqueName("pubsub_batch"),
      });
      try {
        const sub = await ps.subscribe("run:b");
        const before = { ...gw.served };
        const messages = Array.from({ length: 500 }, (_, i) => `m${i}`);
        await Promise.all(messages.map((m) => ps.publish("run:b", m)));
        assert.deepEqual(await take(sub, messages.length), messages);
        const requests = gw.served.command + gw.served.pipeline - before.command -
          before.pipeline;
        assert.ok(gw.served.pipeline > before.pipeline, "a burst goes out as a pipeline");
        assert.ok(requests < 10, `500 publishes took ${requests} requests`);
      } finally {
        await ps.close();
      }
    }),
});

Deno.test({
  name: "pubsub upstash: a message with a line break is dropped and reported, not mangled",
  ignore,
  fn: () =>
    withGateway(async (gw) => {
      const errors: unknown[] = [];
      const ps = await createPubSub(
        { kind: "redis", url: gw.url, token: gw.token, capacity: 8, prefix: uniqueName("nl") },
        { onError: (err) => errors.push(err) },
      );
      try {
        const sub = await ps.subscribe("run:n");
        await ps.publish("run:n", "two\nlines");
        await ps.publish("run:n", "one line");
        assert.equal(await nextMessage(sub), "one line");
        assert.ok(errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"));
      } finally {
        await ps.close();
      }
    }),
});

Deno.test({
  name: "pubsub upstash: a wrong token fails at creation",
  ignore,
  fn: () =>
    withGateway(async (gw) => {
      await assert.rejects(
        () =>
          createPubSub({ kind: "redis", url: gw.url, token: "wrong", capacity: 8, prefix: "x" }),
        /cannot reach Upstash at http:\/\/127\.0\.0\.1:\d+.*Unauthorized/,
      );
      await assert.rejects(
        () => createPubSub({ kind: "redis", url: gw.url, capacity: 8, prefix: "x" }),
        /needs a token/,
      );
    }),
});

Deno.test({
  name:
    "pubsub upstash: losing the endpoint ends subscriptions, publish is dropped, restart recovers",
  ignore,
  async fn() {
    let gw: UpstashGateway | undefined = await startUpstashGateway({ redisUrl: testRedisUrl! });
    const { port, token, url } = gw;
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    try {
      ps = await createPubSub(
        { kind: "redis", url, token, capacity: 64, prefix: uniqueName("pubsub_rest_loss") },
        { onError: (err) => errors.push(err) },
      );
      const sub = await ps.subscribe("run:l");
      await ps.publish("run:l", "before the loss");
      assert.equal(await nextMessage(sub), "before the loss");

      await gw.close();
      gw = undefined;
      assert.equal(await within(sub.ended, 2_000, "transport_lost"), "transport_lost");
      assert.ok(errors.some((e) => e instanceof PubSubError && e.code === "transport_lost"));

      const started = performance.now();
      await ps.publish("run:l", "into the void");
      assert.ok(performance.now() - started < 2_500, "publish must not block while down");
      assert.ok(errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"));
      // The transport's own error, which the HTTP edge answers 503001.
      await assertError(ps.subscribe("run:l"), 503001, { thrown: PubSubUnavailable });

      gw = await startUpstashGateway({ redisUrl: testRedisUrl!, port, token });
      const again = await ps.subscribe("run:l");
      await ps.publish("run:l", "after the restart");
      assert.equal(await nextMessage(again), "after the restart");
    } finally {
      await ps?.close();
      await gw?.close();
    }
  },
});
