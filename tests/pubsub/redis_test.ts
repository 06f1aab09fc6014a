/**
 * The Redis transport against a real Redis: the contract, two PubSubs as two replicas, shared
 * (reference-counted) subscriptions, and losing Redis — a redis-server of the test's own on a
 * free port, killed and stalled mid-subscription, then restarted.
 */
import assert from "node:assert/strict";
import { createClient } from "redis";
import { createPubSub, type PubSub, PubSubError, PubSubUnavailable } from "../../src/pubsub/mod.ts";
import { assertError, eventually, skipNotice, testRedisUrl, uniqueName } from "../_kit/mod.ts";
import { definePubSubContract, nextMessage, take, within } from "./contract.ts";

const ignore = !testRedisUrl;
if (ignore) skipNotice("tests/pubsub/redis_test.ts", "AGENTD_TEST_REDIS_URL");

definePubSubContract(
  "redis",
  (config) => createPubSub({ kind: "redis", url: testRedisUrl, ...config }),
  { ignore },
);

Deno.test({
  name: "pubsub redis: a message published on one replica reaches the other",
  ignore,
  async fn() {
    const prefix = uniqueName("pubsub_replicas");
    const one = await createPubSub({ kind: "redis", url: testRedisUrl, capacity: 64, prefix });
    const two = await createPubSub({ kind: "redis", url: testRedisUrl, capacity: 64, prefix });
    try {
      assert.equal(one.kind, "redis");
      const onTwo = await two.subscribe("run:r1");
      const onOne = await one.subscribe("run:r1");
      await one.publish("run:r1", "from one");
      await two.publish("run:r1", "from two");
      assert.deepEqual(await take(onTwo, 2), ["from one", "from two"]);
      assert.deepEqual(await take(onOne, 2), ["from one", "from two"]);
    } finally {
      await one.close();
      await two.close();
    }
  },
});

Deno.test({
  name: "pubsub redis: subscribers of one channel share one Redis subscription",
  ignore,
  async fn() {
    const prefix = uniqueName("pubsub_refcount");
    const channel = `${prefix}:run:shared`;
    const ps = await createPubSub({ kind: "redis", url: testRedisUrl, capacity: 64, prefix });
    const probe = createClient({ url: testRedisUrl });
    probe.on("error", () => {});
    await probe.connect();
    const numsub = async () => (await probe.pubSubNumSub(channel))[channel];
    try {
      const subs = await Promise.all([1, 2, 3].map(() => ps.subscribe("run:shared")));
      assert.equal(await numsub(), 1);
      subs[0].close();
      subs[1].close();
      assert.equal(await numsub(), 1);
      await ps.publish("run:shared", "still here");
      assert.equal(await nextMessage(subs[2]), "still here");
      subs[2].close();
      await eventually(async () => await numsub() === 0, {
        what: "UNSUBSCRIBE after the last subscriber left",
      });
      // And the channel can be subscribed again afterwards.
      const again = await ps.subscribe("run:shared");
      assert.equal(await numsub(), 1);
      await ps.publish("run:shared", "again");
      assert.equal(await nextMessage(again), "again");
    } finally {
      await ps.close();
      probe.destroy();
    }
  },
});

Deno.test({
  name: "pubsub redis: losing Redis ends subscriptions, publish is dropped, restart recovers",
  ignore,
  async fn() {
    const server = await startRedisServer();
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    try {
      ps = await createPubSub(
        { kind: "redis", url: server.url, capacity: 64, prefix: uniqueName("pubsub_loss") },
        { onError: (err) => errors.push(err) },
      );
      const subA = await ps.subscribe("run:l1");
      const subB = await ps.subscribe("run:l2");
      await ps.publish("run:l1", "before the loss");
      assert.equal(await nextMessage(subA), "before the loss");

      await server.kill();
      assert.equal(await within(subA.ended, 2_000, "transport_lost on kill"), "transport_lost");
      assert.equal(await within(subB.ended, 2_000, "transport_lost on kill"), "transport_lost");
      assert.equal(await nextMessage(subA), undefined);

      const started = performance.now();
      await ps.publish("run:l1", "into the void");
      assert.ok(performance.now() - started < 1_000, "publish must not block while Redis is down");
      assert.ok(
        errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"),
        "the dropped publish is reported to onError",
      );
      assert.ok(errors.some((e) => e instanceof PubSubError && e.code === "transport_lost"));
      // The transport's own error, which the HTTP edge answers 503001.
      await assertError(ps.subscribe("run:l1"), 503001, { thrown: PubSubUnavailable });

      await server.start();
      const subC = await ps.subscribe("run:l1");
      // The publisher reconnects on a later publish (after its backoff): publish until through.
      await eventually(async () => {
        await ps!.publish("run:l1", "after the restart");
        return await nextMessage(subC, 200).catch(() => undefined) === "after the restart";
      }, { what: "publish after the restart" });
      subC.close();
    } finally {
      await ps?.close();
      await server.kill();
    }
  },
});

Deno.test({
  name: "pubsub redis: a stalled Redis is noticed by the heartbeat and publish times out",
  ignore,
  async fn() {
    const server = await startRedisServer();
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    try {
      ps = await createPubSub(
        { kind: "redis", url: server.url, capacity: 64, prefix: uniqueName("pubsub_stall") },
        { onError: (err) => errors.push(err), heartbeatMs: 200, publishTimeoutMs: 300 },
      );
      const sub = await ps.subscribe("run:s1");
      await ps.publish("run:s1", "alive");
      assert.equal(await nextMessage(sub), "alive");

      server.signal("SIGSTOP");
      assert.equal(await within(sub.ended, 2_000, "transport_lost on stall"), "transport_lost");
      const started = performance.now();
      await ps.publish("run:s1", "stalled");
      assert.ok(performance.now() - started < 1_000, "publish must give up on a stalled Redis");
      assert.ok(errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"));
      server.signal("SIGCONT");
    } finally {
      await ps?.close();
      await server.kill();
    }
  },
});

Deno.test({
  name:
    "pubsub redis: an append is one command; a failed entry stops neither the rest nor the publish",
  ignore,
  async fn() {
    const prefix = uniqueName("pubsub_append");
    const errors: unknown[] = [];
    const ps = await createPubSub(
      { kind: "redis", url: testRedisUrl, capacity: 64, prefix, retention: 60_000 },
      { onError: (err) => errors.push(err) },
    );
    const probe = createClient({ url: testRedisUrl });
    probe.on("error", () => {});
    await probe.connect();
    const key = `${prefix}:run:a1:history`;
    try {
      const sub = await ps.subscribe("run:a1");
      await ps.append("run:a1", [{ seq: 1, message: "a" }, { seq: 2, message: "b" }], "[a,b]");
      assert.equal(await nextMessage(sub), "[a,b]");
      // While the run goes on its history lives the retention window plus an hour.
      const ttl = await probe.pTTL(key);
      assert.ok(ttl > 60_000 && ttl <= 60_000 + 3_600_000, `TTL ${ttl}`);
      // Number 2 is kept already: that entry fails, number 3 is kept, the message published.
      await ps.append(
        "run:a1",
        [{ seq: 2, message: "b again" }, { seq: 3, message: "c" }],
        "[b,c]",
      );
      assert.equal(await nextMessage(sub), "[b,c]");
      const page = await ps.history("run:a1", 0);
      assert.deepEqual(page?.entries.map((e) => e.message), ["a", "b", "c"]);
      assert.ok(
        errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"),
        "the failed entry is reported",
      );
      // One entry whose live message is another: the live message is published, the entry kept.
      await ps.append("run:a1", [{ seq: 4, message: "d" }], "live d");
      assert.equal(await nextMessage(sub), "live d");
      assert.deepEqual((await ps.history("run:a1", 3))?.entries.map((e) => e.message), ["d"]);
      await ps.seal("run:a1");
      assert.ok(await probe.pTTL(key) <= 60_000);
      sub.close();
    } finally {
      await ps.close();
      await probe.del(key);
      probe.destroy();
    }
  },
});

Deno.test({
  name: "pubsub redis: a paced token's message goes to Redis once, not once per use",
  ignore,
  async fn() {
    const server = await startRedisServer();
    let ps: PubSub | undefined;
    const probe = createClient({ url: server.url });
    try {
      await probe.connect();
      ps = await createPubSub({
        kind: "redis",
        url: server.url,
        capacity: 256,
        prefix: uniqueName("pubsub_once"),
        retention: 60_000,
      });
      const sub = await ps.subscribe("run:t1");
      const netIn = async () => {
        const info = await probe.sendCommand(["INFO", "stats"]) as string;
        return Number(/total_net_input_bytes:(\d+)/.exec(info)![1]);
      };
      // 100 appends of one 10 KB event each (a token alone in its turn): the history keeps each
      // and the channel hears each, from ~1 MB sent, not ~2.
      const token = (i: number) => JSON.stringify({ seq: i, text: "x".repeat(10_000) });
      const before = await netIn();
      for (let i = 1; i <= 100; i++) {
        await ps.append("run:t1", [{ seq: i, message: token(i) }], token(i));
      }
      const sent = await netIn() - before;
      assert.ok(sent > 1_000_000 && sent < 1_200_000, `${sent} bytes to Redis for 1 MB of events`);
      assert.deepEqual(await take(sub, 100), Array.from({ length: 100 }, (_, i) => token(i + 1)));
      const page = await ps.history("run:t1", 0);
      assert.deepEqual(
        page?.entries.map((e) => e.message),
        Array.from({ length: 100 }, (_, i) => token(i + 1)),
      );
      sub.close();
    } finally {
      await ps?.close();
      probe.destroy();
      await server.kill();
    }
  },
});

Deno.test({
  name: "pubsub redis: a Redis that runs no scripts gets the append as separate commands",
  ignore,
  async fn() {
    const server = await startRedisServer(["--rename-command", "EVAL", ""]);
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    try {
      ps = await createPubSub(
        { kind: "redis", url: server.url, capacity: 64, prefix: uniqueName("pubsub_noscript") },
        { onError: (err) => errors.push(err) },
      );
      const sub = await ps.subscribe("run:n1");
      await ps.append("run:n1", [{ seq: 1, message: "a" }, { seq: 2, message: "b" }], "[a,b]");
      await ps.append("run:n1", [{ seq: 3, message: "c" }], "c");
      assert.deepEqual(await take(sub, 2), ["[a,b]", "c"]);
      const page = await ps.history("run:n1", 1);
      assert.deepEqual(page?.entries.map((e) => e.message), ["b", "c"]);
      assert.deepEqual(errors, []);
      sub.close();
    } finally {
      await ps?.close();
      await server.kill();
    }
  },
});

Deno.test({
  name:
    "pubsub redis: a turn's appends go as one call of the script by its SHA, and on after a SCRIPT FLUSH",
  ignore,
  async fn() {
    const server = await startRedisServer();
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    const probe = createClient({ url: server.url });
    try {
      await probe.connect();
      ps = await createPubSub(
        { kind: "redis", url: server.url, capacity: 64, prefix: uniqueName("pubsub_sha") },
        { onError: (err) => errors.push(err) },
      );
      // Loaded as the publisher connected: one script in Redis's cache.
      const loaded = await probe.sendCommand(["INFO", "memory"]) as string;
      assert.match(loaded, /number_of_cached_scripts:1/);
      const sub = await ps.subscribe("run:s1");
      await ps.append("run:s1", [{ seq: 1, message: "a" }], "a");
      const stats = await probe.sendCommand(["INFO", "commandstats"]) as string;
      assert.match(stats, /cmdstat_evalsha:calls=1,/);
      assert.doesNotMatch(stats, /cmdstat_eval:/);
      // The appends of one turn go out as one command, before a publish asked for after them.
      const other = await ps.subscribe("run:s2");
      const turn = [
        ps.append("run:s2", [{ seq: 1, message: "x" }], "x"),
        ps.append("run:s3", [{ seq: 1, message: "y" }], "y"),
        ps.append("run:s2", [{ seq: 2, message: "z" }], "z"),
        ps.publish("run:s2", "after"),
      ];
      await Promise.all(turn);
      assert.deepEqual(await take(other, 3), ["x", "z", "after"]);
      const batched = await probe.sendCommand(["INFO", "commandstats"]) as string;
      assert.match(batched, /cmdstat_evalsha:calls=2,/);
      assert.deepEqual(
        (await ps.history("run:s2", 0))?.entries.map((e) => e.message),
        ["x", "z"],
      );
      other.close();
      await probe.sendCommand(["SCRIPT", "FLUSH"]);
      await ps.append("run:s1", [{ seq: 2, message: "b" }], "b");
      await ps.append("run:s1", [{ seq: 3, message: "c" }], "c");
      assert.deepEqual(await take(sub, 3), ["a", "b", "c"]);
      const page = await ps.history("run:s1", 0);
      assert.deepEqual(page?.entries.map((e) => e.message), ["a", "b", "c"]);
      assert.deepEqual(errors, []);
      sub.close();
    } finally {
      await ps?.close();
      probe.destroy();
      await server.kill();
    }
  },
});

Deno.test({
  name: "pubsub redis: a Redis out of memory keeps no history of an append but publishes it",
  ignore,
  async fn() {
    const server = await startRedisServer(["--maxmemory", "1", "--maxmemory-policy", "noeviction"]);
    const errors: unknown[] = [];
    let ps: PubSub | undefined;
    try {
      ps = await createPubSub(
        { kind: "redis", url: server.url, capacity: 64, prefix: uniqueName("pubsub_oom") },
        { onError: (err) => errors.push(err) },
      );
      const sub = await ps.subscribe("run:o1");
      // The script goes on past the refused XADD (as the separate commands did).
      await ps.append("run:o1", [{ seq: 1, message: "a" }], "a");
      assert.equal(await nextMessage(sub), "a");
      assert.ok(
        errors.some((e) => e instanceof PubSubError && e.code === "publish_dropped"),
        "the entry kept nowhere is reported",
      );
      sub.close();
    } finally {
      await ps?.close();
      await server.kill();
    }
  },
});

Deno.test({
  name: "pubsub redis: configuration errors are clear",
  ignore,
  async fn() {
    const port = freePort();
    await assert.rejects(
      () =>
        createPubSub({
          kind: "redis",
          url: `redis://:secret@127.0.0.1:${port}`,
          capacity: 8,
          prefix: "x",
        }),
      (err: Error) => {
        assert.match(err.message, /cannot connect to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1/);
        assert.doesNotMatch(err.message, /secret/);
        return true;
      },
    );
    await assert.rejects(
      () => createPubSub({ kind: "redis", capacity: 8, prefix: "x" }),
      /kind "redis" needs a url/,
    );
    await assert.rejects(
      () => createPubSub({ kind: "redis", url: "ftp://example.com", capacity: 8, prefix: "x" }),
      /unsupported url scheme 'ftp:'/,
    );
  },
});

/** A redis-server of the test's own that can be killed, stalled and restarted on its port. */
interface RedisServer {
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
  signal(signal: Deno.Signal): void;
}

async function startRedisServer(extra: string[] = []): Promise<RedisServer> {
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = new Deno.Command("redis-server", {
        args: [
          ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
          ...extra,
        ],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      await eventually(async () => {
        try {
          const conn = await Deno.connect({ hostname: "127.0.0.1", port });
          conn.close();
          return true;
        } catch {
          return false;
        }
      }, { what: `redis-server on port ${port}` });
    },
    async kill() {
      if (!child) return;
      const c = child;
      child = undefined;
      try {
        c.kill("SIGKILL");
      } catch {
        // already gone
      }
      await c.status;
    },
    signal(signal) {
      child?.kill(signal);
    },
  };
  await server.start();
  return server;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
