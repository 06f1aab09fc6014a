/**
 * The flood (issue 23): one tenant submits `--runs` detached runs from `--submitters` loops at once
 * while another tenant does plain attached runs and `GET /v1/sessions`, one after the other. Prints
 * the other tenant's latency (p50/max) before and during the flood, the server's peak RSS and how
 * many runs of the flood it executed at once, for each `runtime.runs.max_concurrent` of
 * `--limits` (agentd, `main.ts serve`, SQLite, the offline echo model).
 *
 *   deno run -A --no-prompt bench/flood.ts [--runs 2000] [--submitters 20] [--limits 100000,1000,16]
 *     [--seconds 30] [--delay-ms 100]
 *
 * A flood run echoes 10 words `--delay-ms` apart (~1 s). The measure window starts with the first
 * submit and lasts `--seconds`; then the server is stopped (the rest of the flood is not waited
 * for). The other tenant's plain run is an attached echo run without delay, timed to its end.
 */
import { parseArgs } from "node:util";
import { type Proc, rssBytes, spawnServer } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "2000" },
    submitters: { type: "string", default: "20" },
    limits: { type: "string", default: "100000,1000,16" },
    seconds: { type: "string", default: "30" },
    "delay-ms": { type: "string", default: "100" },
  },
});
const RUNS = Number(flags.runs);
const SUBMITTERS = Number(flags.submitters);
const WINDOW_MS = Number(flags.seconds) * 1000;
const DELAY_MS = Number(flags["delay-ms"]);

const text = (value: string) => ({ role: "user", content: [{ type: "text", value }] });
const FLOOD_BODY = JSON.stringify({
  messages: [text("one two three four five six seven eight nine ten")],
  model: { override: { inference_params: { provider_params: { delay_ms: DELAY_MS } } } },
});
const PLAIN_BODY = JSON.stringify({ messages: [text("hello there")] });

/** Starts agentd with `max_concurrent` and waits for its URL. */
async function serve(dir: string, maxConcurrent: number): Promise<Proc> {
  const manifest = {
    agent: { name: "flood", model: { provider: "echo" } },
    runtime: {
      storage: { path: `${dir}/flood-${maxConcurrent}.db` },
      log_level: "warn",
      runs: { max_concurrent: maxConcurrent },
    },
    http_server: { host: "127.0.0.1", port: 0, max_connections: 100_000 },
  };
  const path = `${dir}/flood-${maxConcurrent}.json`;
  await Deno.writeTextFile(path, JSON.stringify(manifest));
  return await spawnServer(
    ["run", "-A", "--no-prompt", "main.ts", "serve", path, "--port", "0"],
    {},
    60_000,
  );
}

/** Milliseconds `f` took. */
async function timed(f: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await f();
  return performance.now() - start;
}

/** The other tenant: a plain attached run read to its end, then a session list, until `stop`. */
async function otherTenant(url: string, stop: AbortSignal) {
  const headers = { "content-type": "application/json", "x-tenant-id": "other" };
  const runs: number[] = [];
  const lists: number[] = [];
  let failed = 0;
  while (!stop.aborted) {
    runs.push(
      await timed(async () => {
        const res = await fetch(`${url}/v1/runs`, { method: "POST", headers, body: PLAIN_BODY });
        const body = await res.text();
        if (res.status !== 200 || !body.includes('"status":"completed"')) failed++;
      }),
    );
    lists.push(
      await timed(async () => {
        const res = await fetch(`${url}/v1/sessions?per_page=20`, { headers });
        await res.text();
        if (res.status !== 200) failed++;
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
  }
  return { runs, lists, failed };
}

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  return `${p50.toFixed(0)} / ${(sorted.at(-1) ?? NaN).toFixed(0)}`;
}

/** One level: the other tenant alone for 3 s, then during the flood's window. */
async function level(dir: string, maxConcurrent: number): Promise<string> {
  const server = await serve(dir, maxConcurrent);
  try {
    const idle = new AbortController();
    setTimeout(() => idle.abort(), 3_000);
    const before = await otherTenant(server.url, idle.signal);
    const rssBefore = await rssBytes(server.pid).then((b) => b / 2 ** 20);

    const window = new AbortController();
    let peakRss = rssBefore;
    let peakRunning = 0;
    const sampler = setInterval(async () => {
      peakRss = Math.max(
        peakRss,
        await rssBytes(server.pid).then((b) => b / 2 ** 20).catch(() => 0),
      );
    }, 250);
    // Executing runs (all tenants), from the metrics, while the window lasts.
    const counting = (async () => {
      while (!window.signal.aborted) {
        const metrics = await (await fetch(`${server.url}/metrics`)).text().catch(() => "");
        const running = Number(/^agentd_runs_active(?:\{[^}]*\})? (\S+)$/m.exec(metrics)?.[1] ?? 0);
        peakRunning = Math.max(peakRunning, running);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const during = otherTenant(server.url, window.signal);
    const headers = { "content-type": "application/json", "x-tenant-id": "flood" };
    let next = 0;
    let refused = 0;
    const submitStart = performance.now();
    const submitters = Array.from({ length: SUBMITTERS }, async () => {
      while (next < RUNS && !window.signal.aborted) {
        next++;
        const res = await fetch(`${server.url}/v1/runs/start`, {
          method: "POST",
          headers,
          body: FLOOD_BODY,
        });
        await res.text();
        if (res.status !== 202) refused++;
      }
    });
    const timer = setTimeout(() => window.abort(), WINDOW_MS);
    await Promise.all(submitters);
    const submitMs = performance.now() - submitStart;
    await counting;
    clearTimeout(timer);
    clearInterval(sampler);
    const other = await during;
    return `| ${maxConcurrent} | ${stats(before.runs)} | ${stats(other.runs)} | ${
      stats(before.lists)
    } | ${stats(other.lists)} | ${other.failed} | ${rssBefore.toFixed(0)} → ${
      peakRss.toFixed(0)
    } | ${peakRunning} | ${(submitMs / 1000).toFixed(1)} s${
      refused ? ` (${refused} refused)` : ""
    } |`;
  } finally {
    await server.stop();
  }
}

const dir = await Deno.makeTempDir({ prefix: "agentd_flood_" });
try {
  const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  console.log(`${RUNS} detached runs from ${SUBMITTERS} submitters; load average ${load}`);
  console.log(
    "| max_concurrent | other's run p50/max ms, idle | during flood | sessions list idle | " +
      "during flood | other's failures | RSS MiB (idle → peak) | runs at once (peak) | " +
      "flood submitted in |",
  );
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const limit of flags.limits!.split(",").map(Number)) console.log(await level(dir, limit));
} finally {
  await Deno.remove(dir, { recursive: true });
}
