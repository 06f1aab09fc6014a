/**
 * Measures publish → receive latency between two PubSub instances (two "replicas" in one
 * process, so one clock): one message in flight at a time, then a paced stream.
 *
 *   deno run -A tests/pubsub/latency.ts [redis-url] [count]
 *
 * Transports: memory, redis (the URL, default redis://127.0.0.1:6379) and Upstash REST through
 * the test gateway in front of that Redis.
 */
import { createPubSub, type PubSub } from "../../src/pubsub/mod.ts";
import { uniqueName } from "../_kit/mod.ts";
import { startUpstashGateway } from "./upstash_gateway.ts";

const redisUrl = Deno.args[0] ?? "redis://127.0.0.1:6379";
const count = Number(Deno.args[1] ?? 2000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(label: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  console.log(
    `${label.padEnd(34)} n=${sorted.length}  p50=${f(percentile(sorted, 50))}  ` +
      `p99=${f(percentile(sorted, 99))}  max=${f(sorted[sorted.length - 1])}`,
  );
}

async function measure(label: string, publisher: PubSub, receiver: PubSub): Promise<void> {
  const sub = await receiver.subscribe("run:latency");
  const iterator = sub[Symbol.asyncIterator]();
  // Warm-up: connections, JIT.
  for (let i = 0; i < 200; i++) {
    await publisher.publish("run:latency", JSON.stringify({ t: performance.now() }));
    await iterator.next();
  }
  const oneByOne: number[] = [];
  for (let i = 0; i < count; i++) {
    await publisher.publish("run:latency", JSON.stringify({ t: performance.now(), i }));
    const { value } = await iterator.next();
    oneByOne.push(performance.now() - JSON.parse(value!).t);
  }
  summary(`${label} (one in flight)`, oneByOne);

  // A token stream: publishes every ~1 ms, not awaited, as the run service sends them.
  const paced: number[] = [];
  const reading = (async () => {
    for (let i = 0; i < count; i++) {
      const { value } = await iterator.next();
      paced.push(performance.now() - JSON.parse(value!).t);
    }
  })();
  for (let i = 0; i < count; i++) {
    publisher.publish("run:latency", JSON.stringify({ t: performance.now(), i }));
    if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await reading;
  summary(`${label} (~1000 msg/s, unawaited)`, paced);
  sub.close();
}

const config = { capacity: 65_536 };
{
  const prefix = uniqueName("latency");
  const a = await createPubSub({ kind: "memory", prefix, ...config });
  const b = await createPubSub({ kind: "memory", prefix, ...config });
  await measure("memory", a, b);
  await a.close();
  await b.close();
}
{
  const prefix = uniqueName("latency");
  const a = await createPubSub({ kind: "redis", url: redisUrl, prefix, ...config });
  const b = await createPubSub({ kind: "redis", url: redisUrl, prefix, ...config });
  await measure("redis", a, b);
  await a.close();
  await b.close();
}
{
  const gw = await startUpstashGateway({ redisUrl });
  const prefix = uniqueName("latency");
  const rest = { kind: "redis" as const, url: gw.url, token: gw.token, prefix, ...config };
  const a = await createPubSub(rest);
  const b = await createPubSub(rest);
  await measure("upstash gateway", a, b);
  await a.close();
  await b.close();
  await gw.close();
}
