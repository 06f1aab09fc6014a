/**
 * Run benchmarks (`deno task bench`). Starts agentd (`main.ts serve`) and a bare `Deno.serve` SSE
 * baseline as separate processes, drives them over loopback HTTP with the offline echo model, and
 * prints a table:
 *
 *   (a) completed attached runs per second at concurrency 1, 16 and 64, SQLite and PostgreSQL;
 *   (b) added time to first token over the fake model alone, p50 / p99;
 *   (c) concurrent open attached streams held, and server memory per stream;
 *   (d) re-attach delivery latency through Redis between two agentd processes, p50 / p99.
 *
 * Flags: --quick (short phases, 1,000 streams), --streams N, --seconds S, --tokens N.
 * PostgreSQL and Redis parts use AGENTD_BENCH_POSTGRES_URL / AGENTD_BENCH_REDIS_URL
 * (default postgres://postgres@127.0.0.1:5432/test and redis://127.0.0.1:6379).
 */
import postgres from "postgres";
import { createClient } from "redis";
import { parseArgs } from "node:util";
import { type Proc, rssBytes, spawnServer as spawn } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    quick: { type: "boolean", default: false },
    streams: { type: "string" },
    seconds: { type: "string" },
    tokens: { type: "string", default: "32" },
  },
});
const SECONDS = Number(flags.seconds ?? (flags.quick ? 2 : 5));
const STREAMS = Number(flags.streams ?? (flags.quick ? 1000 : 10_000));
const TOKENS = Number(flags.tokens);
const PG_URL = Deno.env.get("AGENTD_BENCH_POSTGRES_URL") ??
  "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = Deno.env.get("AGENTD_BENCH_REDIS_URL") ?? "redis://127.0.0.1:6379";
const words = Array.from({ length: TOKENS }, (_, i) => `w${i}`).join(" ");

async function agentd(manifest: Record<string, unknown>, dir: string, name: string) {
  const path = `${dir}/${name}.json`;
  await Deno.writeTextFile(path, JSON.stringify(manifest));
  return spawn(
    [
      "run",
      "-A",
      "--no-prompt",
      "--unstable-worker-options",
      "main.ts",
      "serve",
      path,
      "--port",
      "0",
    ],
    { AGENT__RUNTIME__LOG_LEVEL: "warn" },
  );
}

const baseManifest = (storage: Record<string, unknown>, pubsub?: Record<string, unknown>) => ({
  agent: { name: "bench", model: { provider: "echo" } },
  runtime: { storage, ...(pubsub ? { pubsub } : {}), log_level: "warn" },
  http_server: { host: "127.0.0.1", port: 0, max_body_bytes: 1_048_576 },
});

function runBody(delayMs = 0) {
  return JSON.stringify({
    messages: [{ role: "user", content: [{ type: "text", value: words }] }],
    ...(delayMs
      ? { model: { override: { inference_params: { provider_params: { delay_ms: delayMs } } } } }
      : {}),
  });
}

/** Posts one attached run and reads it to the end; returns ms to the first token. */
async function oneRun(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: runBody(),
  });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  let first = -1;
  let text = "";
  for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
    if (first < 0 && chunk.includes("text_message_content")) first = performance.now() - started;
    text += chunk;
  }
  if (!text.includes('"status":"completed"')) throw new Error("run did not complete");
  return first;
}

async function throughput(url: string, concurrency: number): Promise<number> {
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await oneRun(url);
      done++;
    }
  }));
  return done / SECONDS;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function ttft(url: string, samples: number): Promise<number[]> {
  for (let i = 0; i < 20; i++) await oneRun(url); // warm-up
  const out: number[] = [];
  for (let i = 0; i < samples; i++) out.push(await oneRun(url));
  return out;
}

/** Opens `count` attached runs that stay open; returns how many were held and bytes per stream. */
async function openStreams(proc: Proc, count: number, path: string) {
  for (let i = 0; i < 20; i++) await oneRun(proc.url).catch(() => {});
  const before = await rssBytes(proc.pid);
  const controllers: AbortController[] = [];
  let held = 0;
  const batch = 100;
  for (let i = 0; i < count; i += batch) {
    const opened = await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, async () => {
        const controller = new AbortController();
        controllers.push(controller);
        try {
          const res = await fetch(`${proc.url}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: runBody(600_000),
            signal: controller.signal,
          });
          if (res.status !== 200) {
            await res.body?.cancel();
            return false;
          }
          // Read the first frames so the stream is really flowing, then keep it open.
          const reader = res.body!.getReader();
          await reader.read();
          return true;
        } catch {
          return false;
        }
      }),
    );
    held += opened.filter(Boolean).length;
  }
  await new Promise((r) => setTimeout(r, 1000));
  const after = await rssBytes(proc.pid);
  for (const c of controllers) c.abort();
  return { held, perStream: (after - before) / Math.max(held, 1), total: after };
}

async function redisLatency(dir: string): Promise<{ agentd: number[]; raw: number[] }> {
  const schema = `agentd_bench_${Date.now().toString(36)}`;
  const prefix = `agentd_bench_${crypto.randomUUID().slice(0, 8)}`;
  const manifest = baseManifest(
    { url: PG_URL, schema },
    { kind: "redis", url: REDIS_URL, prefix },
  );
  const a = await agentd(manifest, dir, "a");
  const b = await agentd(manifest, dir, "b");
  const latencies: number[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      const res = await fetch(`${a.url}/v1/runs/start`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{
            role: "user",
            content: [{ type: "text", value: Array(200).fill("tok").join(" ") }],
          }],
          model: { override: { inference_params: { provider_params: { delay_ms: 5 } } } },
        }),
      });
      const { run_id } = await res.json();
      const events = await fetch(`${b.url}/v1/runs/${run_id}/events`);
      let buffer = "";
      for await (const chunk of events.body!.pipeThrough(new TextDecoderStream())) {
        const now = (performance.timeOrigin + performance.now()) / 1000;
        buffer += chunk;
        const frames = buffer.split("\n\n");
        buffer = frames.pop()!;
        for (const f of frames) {
          const data = f.split("\n").find((l) => l.startsWith("data: "));
          if (!data || !f.includes("text_message_content")) continue;
          latencies.push((now - JSON.parse(data.slice(6)).timestamp) * 1000);
        }
      }
    }
  } finally {
    await a.stop();
    await b.stop();
    const sql = postgres(PG_URL, { onnotice: () => {} });
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.end();
  }
  // Baseline: the same hop through Redis alone, between two connections of this process.
  const pub = createClient({ url: REDIS_URL });
  const sub = pub.duplicate();
  await pub.connect();
  await sub.connect();
  const raw: number[] = [];
  const channel = `${prefix}:raw`;
  await sub.subscribe(channel, (m) => raw.push(performance.now() - Number(m)));
  for (let i = 0; i < 600; i++) {
    await pub.publish(channel, String(performance.now()));
    await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 100));
  await sub.unsubscribe(channel);
  await sub.quit();
  await pub.quit();
  return { agentd: latencies, raw };
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const rows: string[][] = [];
const dir = await Deno.makeTempDir({ prefix: "agentd_bench_" });
const pgSchema = `agentd_bench_${Date.now().toString(36)}`;

try {
  console.error(`bench: ${SECONDS}s per phase, ${TOKENS} tokens per run, ${STREAMS} streams`);
  const baseline = await spawn(["run", "-A", "bench/baseline_server.ts"]);
  const sqlite = await agentd(baseManifest({ path: `${dir}/bench.db` }), dir, "sqlite");
  const pg = await agentd(baseManifest({ url: PG_URL, schema: pgSchema }), dir, "pg");
  try {
    for (const c of [1, 16, 64]) {
      const base = await throughput(baseline.url, c);
      const s = await throughput(sqlite.url, c);
      const p = await throughput(pg.url, c);
      rows.push([`(a) runs/s, concurrency ${c}, SQLite`, fmt(s), fmt(base), fmt(s / base, 2)]);
      rows.push([`(a) runs/s, concurrency ${c}, PostgreSQL`, fmt(p), fmt(base), fmt(p / base, 2)]);
    }
    const samples = flags.quick ? 100 : 300;
    const baseT = await ttft(baseline.url, samples);
    const sqlT = await ttft(sqlite.url, samples);
    for (const q of [50, 99]) {
      const b = percentile(baseT, q);
      const a = percentile(sqlT, q);
      rows.push([
        `(b) time to first token p${q} ms (SQLite)`,
        fmt(a, 2),
        fmt(b, 2),
        `+${fmt(a - b, 2)} ms`,
      ]);
    }
  } finally {
    await pg.stop();
    await sqlite.stop();
  }
  const streamServer = await agentd(baseManifest({ path: `${dir}/streams.db` }), dir, "streams");
  try {
    const held = await openStreams(streamServer, STREAMS, "/v1/runs");
    const base = await openStreams(baseline, STREAMS, "/v1/runs");
    rows.push([
      `(c) open attached streams held (of ${STREAMS})`,
      String(held.held),
      String(base.held),
      fmt(held.held / Math.max(base.held, 1), 2),
    ]);
    rows.push([
      "(c) server memory per stream, KiB",
      fmt(held.perStream / 1024),
      fmt(base.perStream / 1024),
      fmt(held.perStream / Math.max(base.perStream, 1), 2),
    ]);
    rows.push([
      "(c) server RSS with all streams open, MiB",
      fmt(held.total / 2 ** 20),
      fmt(base.total / 2 ** 20),
      "",
    ]);
  } finally {
    await streamServer.stop();
    await baseline.stop();
  }
  const lat = await redisLatency(dir);
  for (const q of [50, 99]) {
    rows.push([
      `(d) re-attach delivery via Redis p${q} ms`,
      fmt(percentile(lat.agentd, q), 2),
      fmt(percentile(lat.raw, q), 2),
      `+${fmt(percentile(lat.agentd, q) - percentile(lat.raw, q), 2)} ms`,
    ]);
  }
} finally {
  const sql = postgres(PG_URL, { onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${pgSchema}" cascade`).catch(() => {});
  await sql.end();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}

const header = ["measure", "agentd", "baseline", "ratio / added"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join(" | ");
console.log(line(header));
console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
for (const r of rows) console.log(line(r));
