/**
 * What one open model stream costs the process that reads it, by HTTP client (issue 24): Deno's
 * `fetch` (what the providers use, its body read 4 KiB at a time as `observed_fetch.ts` does)
 * against `node:http`'s client. Each measurement runs in a fresh process against a fake OpenAI
 * server in another (this script with `--fake-model`):
 *
 * - memory: `--streams` responses held open (a token every 5 s), RSS before and after, KiB each;
 * - CPU: as many responses of 200 tokens at 50 tokens/s read to their end, the process's CPU time
 *   (user + system, every thread) per token.
 *
 *   deno run -A --no-prompt bench/model_transport.ts [--streams 2000] [--runs 2]
 */
import http from "node:http";
import process from "node:process";
import { parseArgs } from "node:util";
import { serveFakeModel } from "./_fake_model.ts";
import { spawnServer } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    streams: { type: "string", default: "2000" },
    runs: { type: "string", default: "2" },
    "fake-model": { type: "boolean", default: false },
    client: { type: "string" },
    measure: { type: "string" },
    url: { type: "string" },
  },
});
const STREAMS = Number(flags.streams);

const REQUEST = JSON.stringify({ model: "fake", stream: true, messages: [] });

/** Opens one streaming response; `onChunk` per body read; resolves at its end. */
function stream(client: string, url: string, onChunk: () => void, opened: () => void) {
  if (client === "fetch") {
    return (async () => {
      const response = await fetch(url, { method: "POST", body: REQUEST });
      const reader = response.body!.getReader({ mode: "byob" });
      opened();
      for (;;) {
        const read = await reader.read(new Uint8Array(4096));
        if (read.done) return;
        onChunk();
      }
    })();
  }
  return new Promise<void>((resolve, reject) => {
    const request = http.request(url, { method: "POST" }, (response) => {
      opened();
      response.on("data", onChunk);
      response.on("end", resolve);
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(REQUEST);
  });
}

/** One measurement, in this process: prints its figure as JSON. */
async function measure(client: string, kind: string, base: string): Promise<void> {
  if (kind === "memory") {
    const url = `${base}/v1/chat/completions?tokens=1000&interval=5000`;
    await new Promise((r) => setTimeout(r, 500));
    const before = Deno.memoryUsage().rss;
    for (let i = 0; i < STREAMS; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, STREAMS - i) }, () =>
          new Promise<void>((opened) => {
            stream(client, url, () => {}, opened).catch(() => {});
          })),
      );
    }
    await new Promise((r) => setTimeout(r, 6_000));
    const kib = (Deno.memoryUsage().rss - before) / STREAMS / 1024;
    console.log(JSON.stringify({ value: kib }));
  } else {
    const url = `${base}/v1/chat/completions?tokens=200&interval=20`;
    const n = Math.min(STREAMS, 200);
    let chunks = 0;
    const start = process.cpuUsage();
    await Promise.all(
      Array.from({ length: n }, () => stream(client, url, () => chunks++, () => {})),
    );
    const used = process.cpuUsage(start);
    console.log(JSON.stringify({ value: (used.user + used.system) / chunks }));
  }
  Deno.exit(0);
}

/** Runs one measurement in a fresh process. */
async function child(client: string, kind: string, url: string): Promise<number> {
  const args = ["run", "-A", "--no-prompt", "bench/model_transport.ts", "--client", client];
  args.push("--measure", kind, "--url", url, "--streams", String(STREAMS));
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: new URL("..", import.meta.url).pathname,
  }).output();
  const line = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  return JSON.parse(line).value;
}

if (flags["fake-model"]) serveFakeModel({ intervalMs: 20 });
else if (flags.client && flags.measure && flags.url) {
  await measure(flags.client, flags.measure, flags.url);
} else {
  const fake = await spawnServer([
    "run",
    "-A",
    "--no-prompt",
    "bench/model_transport.ts",
    "--fake-model",
  ]);
  const figures: Record<string, number[]> = {};
  try {
    for (let run = 0; run < Number(flags.runs); run++) {
      for (const client of ["fetch", "node:http"]) {
        for (const kind of ["memory", "cpu"]) {
          (figures[`${client} ${kind}`] ??= []).push(
            await child(client === "fetch" ? "fetch" : "node-http", kind, fake.url),
          );
        }
      }
    }
  } finally {
    await fake.stop();
  }
  console.log(`| client | KiB per open stream (${STREAMS}) | CPU µs per token (200 streams) |`);
  console.log("|---|--:|--:|");
  const show = (v: number[]) => v.map((x) => x.toFixed(1)).join(", ");
  for (const client of ["fetch", "node:http"]) {
    console.log(
      `| ${client} | ${show(figures[`${client} memory`])} | ${show(figures[`${client} cpu`])} |`,
    );
  }
}
