/**
 * The PubSub contract, one suite run against every transport (memory, Redis, Upstash REST):
 * ordered delivery, live-only delivery, close, overflow, channel and prefix isolation.
 */
import assert from "node:assert/strict";
import type { PubSub, Subscription } from "../../src/pubsub/mod.ts";
import { BufferedSubscription } from "../../src/pubsub/subscription.ts";
import { eventually, uniqueName } from "../_kit/mod.ts";

/** What a contract test asks of the transport under test. */
export interface FactoryConfig {
  prefix: string;
  capacity: number;
  /** History retention in ms (the transport's default when unset). */
  retention?: number;
  /** History entries kept per channel (the transport's default when unset). */
  retention_max_events?: number;
}

/** Builds a transport under test for one prefix and capacity (and history settings). */
export type PubSubFactory = (config: FactoryConfig) => Promise<PubSub>;

/** Options of `definePubSubContract`. */
export interface ContractOptions {
  /** Skips the suite (its service is not configured). */
  ignore?: boolean;
}

/** Waits for the next message of `sub`, failing after `ms`; `undefined` when iteration ended. */
export async function nextMessage(sub: Subscription, ms = 5_000): Promise<string | undefined> {
  const iterator = sub[Symbol.asyncIterator]();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const result = await Promise.race([
      iterator.next(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no message within ${ms} ms`)), ms);
      }),
    ]);
    return result.done ? undefined : result.value;
  } finally {
    clearTimeout(timer);
  }
}

/** Collects the next `n` messages of `sub`, failing after `ms` in total. */
export async function take(sub: Subscription, n: number, ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  const out: string[] = [];
  while (out.length < n) {
    const message = await nextMessage(sub, Math.max(1, deadline - Date.now()));
    if (message === undefined) throw new Error(`iteration ended after ${out.length} of ${n}`);
    out.push(message);
  }
  return out;
}

/** Resolves `promise`, failing after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps one message in the channel's history as number `seq`, and publishes it. */
function appendOne(ps: PubSub, channel: string, seq: number, message: string): Promise<void> {
  return ps.append(channel, [{ seq, message }], message);
}

/** Registers the contract tests for one transport. */
export function definePubSubContract(
  label: string,
  create: PubSubFactory,
  options: ContractOptions = {},
): void {
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test({ name: `pubsub contract (${label}): ${name}`, ignore: options.ignore, fn });

  /** Runs `fn` with a fresh transport and closes it afterwards. */
  const using = async (
    fn: (ps: PubSub) => Promise<void>,
    capacity = 4096,
    history: Pick<FactoryConfig, "retention" | "retention_max_events"> = {},
  ): Promise<void> => {
    const ps = await create({ prefix: uniqueName("pubsub_contract"), capacity, ...history });
    try {
      await fn(ps);
    } finally {
      await ps.close();
    }
  };

  test("delivers every message in order to several subscribers", () =>
    using(async (ps) => {
      const subs = await Promise.all([1, 2, 3].map(() => ps.subscribe("run:a")));
      const messages = Array.from({ length: 300 }, (_, i) => JSON.stringify({ seq: i }));
      // Not awaited one by one: the run service fires publishes without waiting for each.
      await Promise.all(messages.map((m) => ps.publish("run:a", m)));
      for (const sub of subs) assert.deepEqual(await take(sub, messages.length), messages);
      for (const sub of subs) sub.close();
    }));

  test("delivers nothing published before subscribe", () =>
    using(async (ps) => {
      // A fresh channel, nobody subscribed yet.
      await ps.publish("run:b", "before-1");
      const first = await ps.subscribe("run:b");
      await ps.publish("run:b", "after-1");
      assert.equal(await nextMessage(first), "after-1");

      // A channel that already has a subscriber: a transport sharing one upstream subscription
      // must not hand a newcomer the messages still in flight to the older subscriber.
      const before = Array.from({ length: 200 }, (_, i) => `before-${i}`);
      await Promise.all(before.map((m) => ps.publish("run:b", m)));
      const late = await ps.subscribe("run:b");
      await ps.publish("run:b", "after-2");
      assert.equal(await nextMessage(late), "after-2");
      assert.deepEqual(await take(first, 201), [...before, "after-2"]);
      first.close();
      late.close();
    }));

  test("close() ends iteration and resolves ended with closed", () =>
    using(async (ps) => {
      const sub = await ps.subscribe("run:c");
      const pending = nextMessage(sub);
      sub.close();
      assert.equal(await pending, undefined);
      assert.equal(await sub.ended, "closed");
      await ps.publish("run:c", "after close");
      assert.equal(await nextMessage(sub), undefined);

      // Leaving a for-await loop early closes the subscription as well.
      const looped = await ps.subscribe("run:c");
      await ps.publish("run:c", "one");
      for await (const message of looped) {
        assert.equal(message, "one");
        break;
      }
      assert.equal(await looped.ended, "closed");

      // Closing the PubSub ends what is still open.
      const open = await ps.subscribe("run:c");
      await ps.close();
      assert.equal(await open.ended, "closed");
      assert.equal(await nextMessage(open), undefined);
    }));

  test("close() with publishes in flight settles every one of them", async () => {
    const ps = await create({ prefix: uniqueName("pubsub_contract"), capacity: 4096 });
    const sub = await ps.subscribe("run:h");
    const pending = Array.from({ length: 1000 }, (_, i) => ps.publish("run:h", `m${i}`));
    await within(ps.close(), 5_000, "close() with publishes in flight");
    await within(Promise.all(pending), 5_000, "publishes settling after close()");
    assert.equal(await sub.ended, "closed");
    // Publishing after close() is a dropped message, not an exception.
    await ps.publish("run:h", "too late");
  });

  test("overflow closes only the slow subscriber; publish never waits", () =>
    using(async (ps) => {
      const slow = await ps.subscribe("run:d");
      const fast = await ps.subscribe("run:d");
      const messages = Array.from({ length: 200 }, (_, i) => `m${i}`);
      const received: string[] = [];
      // In bursts of half the capacity, each read by `fast` before the next: a reader that keeps
      // up. Nothing reads `slow`; publishing must still complete, and promptly.
      for (let i = 0; i < messages.length; i += 8) {
        const burst = messages.slice(i, i + 8);
        await within(
          Promise.all(burst.map((m) => ps.publish("run:d", m))),
          2_000,
          "publishing while a subscriber does not read",
        );
        received.push(...await take(fast, burst.length));
      }
      assert.deepEqual(received, messages);
      assert.equal(await within(slow.ended, 5_000, "slow subscriber overflow"), "overflow");
      assert.equal(await nextMessage(slow), undefined);
      await ps.publish("run:d", "still flowing");
      assert.equal(await nextMessage(fast), "still flowing");
      fast.close();
    }, 16));

  test("a subscriber within capacity is not cut off", () =>
    using(async (ps) => {
      const sub = await ps.subscribe("run:e");
      const messages = Array.from({ length: 8 }, (_, i) => `m${i}`);
      await Promise.all(messages.map((m) => ps.publish("run:e", m)));
      // Until a networked transport has delivered all of them into the buffer, unread.
      assert.ok(sub instanceof BufferedSubscription);
      await eventually(() => sub.buffered === 8, { what: "8 messages buffered" });
      // Exactly `capacity` messages buffered: still open, all readable.
      assert.deepEqual(await take(sub, 8), messages);
      sub.close();
      assert.equal(await sub.ended, "closed");
    }, 8));

  test("channels are isolated", () =>
    using(async (ps) => {
      const a = await ps.subscribe("run:f1");
      const b = await ps.subscribe("run:f2");
      await ps.publish("run:f1", "for a");
      await ps.publish("run:f2", "for b");
      await ps.publish("run:f1", "for a again");
      assert.deepEqual(await take(a, 2), ["for a", "for a again"]);
      assert.deepEqual(await take(b, 1), ["for b"]);
      a.close();
      b.close();
    }));

  test("prefixes isolate two PubSub instances", async () => {
    const one = await create({ prefix: uniqueName("pubsub_one"), capacity: 64 });
    const two = await create({ prefix: uniqueName("pubsub_two"), capacity: 64 });
    try {
      const subOne = await one.subscribe("run:g");
      const subTwo = await two.subscribe("run:g");
      await one.publish("run:g", "from one");
      await two.publish("run:g", "from two");
      assert.equal(await nextMessage(subOne), "from one");
      assert.equal(await nextMessage(subTwo), "from two");
      await one.publish("run:g", "one again");
      assert.equal(await nextMessage(subOne), "one again");
      await two.publish("run:g", "two again");
      assert.equal(await nextMessage(subTwo), "two again");
    } finally {
      await one.close();
      await two.close();
    }
  });

  test("append keeps a history a cursor reads, and publishes", () =>
    using(async (ps) => {
      const sub = await ps.subscribe("run:h1");
      const messages = Array.from({ length: 50 }, (_, i) => JSON.stringify({ seq: i + 1 }));
      // Not awaited one by one, as the run service appends.
      await Promise.all(messages.map((m, i) => appendOne(ps, "run:h1", i + 1, m)));
      assert.deepEqual(await take(sub, 50), messages, "published live, in order");
      const all = await ps.history("run:h1", 0);
      assert.deepEqual(all?.entries.map((e) => e.message), messages);
      assert.deepEqual(all?.entries.map((e) => e.seq), messages.map((_, i) => i + 1));
      assert.deepEqual([all?.first, all?.last], [1, 50]);
      const rest = await ps.history("run:h1", 47);
      assert.deepEqual(rest?.entries.map((e) => e.seq), [48, 49, 50]);
      // One live message for several entries (a turn's batch), as the run service publishes.
      await ps.append("run:h1", [{ seq: 51, message: "a" }, { seq: 52, message: "b" }], "[a,b]");
      assert.equal(await nextMessage(sub), "[a,b]");
      assert.deepEqual((await ps.history("run:h1", 50))?.entries.map((e) => e.message), ["a", "b"]);
      const none = await ps.history("run:h1", 52);
      assert.deepEqual(none, { entries: [], first: 1, last: 52 });
      assert.equal(await ps.history("run:never", 0), null, "a channel never appended to");
      sub.close();
    }));

  test("a sealed history is kept for the retention window, then dropped", () =>
    using(
      async (ps) => {
        await appendOne(ps, "run:h2", 1, "one");
        await appendOne(ps, "run:h2", 2, "two");
        await ps.seal("run:h2");
        assert.deepEqual((await ps.history("run:h2", 0))?.entries.map((e) => e.message), [
          "one",
          "two",
        ]);
        await eventually(async () => (await ps.history("run:h2", 0)) === null, {
          timeout: 10_000,
          what: "the sealed history to expire",
        });
      },
      4096,
      { retention: 300 },
    ));

  test("a history keeps about retention_max_events entries, the newest", () =>
    using(
      async (ps) => {
        const n = 1000;
        await Promise.all(
          Array.from({ length: n }, (_, i) => appendOne(ps, "run:h3", i + 1, `m${i + 1}`)),
        );
        const page = await ps.history("run:h3", 0);
        assert.ok(page && page.first !== null && page.last === n);
        // Redis trims approximately (whole stream nodes); the bound is of that order.
        assert.ok(page.first > 1, `trimmed: the oldest kept is ${page.first}`);
        assert.ok(page.entries.length <= 300, `${page.entries.length} entries kept`);
        assert.deepEqual(
          page.entries.map((e) => e.seq),
          Array.from({ length: n - page.first + 1 }, (_, i) => page.first! + i),
          "the newest, consecutive",
        );
      },
      4096,
      { retention_max_events: 100 },
    ));

  test("retention 0 keeps no history; append still publishes", () =>
    using(
      async (ps) => {
        const sub = await ps.subscribe("run:h4");
        await appendOne(ps, "run:h4", 1, "live only");
        assert.equal(await nextMessage(sub), "live only");
        assert.equal(await ps.history("run:h4", 0), null);
        sub.close();
      },
      4096,
      { retention: 0 },
    ));
}
