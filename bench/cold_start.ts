/**
 * Cold start (`deno run -A bench/cold_start.ts`): starts each target as a fresh process, again and
 * again, and prints per target the time from spawn to the first `GET /healthz` 200, to the first
 * attached run answered in full (`run_finished`), and the process's CPU time (user + system, from
 * `/proc/<pid>/stat`) when `/healthz` first answered, which load on the machine inflates less
 * than wall time.
 *
 * Targets: `quickstart` (examples/quickstart/agent.hcl, a fresh SQLite file), `openai`
 * (examples/openai/agent.hcl against a fake OpenAI server in this process), `serverless`
 * (`deno serve serverless.ts` with examples/openai's manifest, `--deny-run --deny-write`), and
 * `bare` (a `Deno.serve` answering 200, the floor of a Deno process).
 *
 * Flags: --runs N (default 5), --targets a,b (default all). Reports median [min–max].
 */
import { parseArgs } from "node:util";
import { freePort } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: { runs: { type: "string", default: "5" }, targets: { type: "string" } },
});
const RUNS = Number(flags.runs);
const TARGETS = (flags.targets ?? "bare,quickstart,openai,serverless").split(",");
const root = new URL("..", import.meta.url).pathname;
const CLK_TCK = 100;

/** A fake OpenAI chat-completions server: 5 tokens, at once. */
function fakeOpenAi(): Deno.HttpServer<Deno.NetAddr> {
  const enc = new TextEncoder();
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      enc.encode(
        `data: ${
          JSON.stringify({
            id: "c1",
            object: "chat.completion.chunk",
            created: 0,
            model: "gpt-4o-mini",
            choices: [{ index: 0, delta, finish_reason: finish }],
          })
        }\n\n`,
      );
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(chunk({ role: "assistant", content: "" }));
        for (const w of ["one ", "two ", "three ", "four ", "five"]) {
          c.enqueue(chunk({ content: w }));
        }
        c.enqueue(chunk({}, "stop"));
        c.enqueue(enc.encode("data: [DONE]\n\n"));
        c.close();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
}

function cpuMs(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 1000 / CLK_TCK;
  } catch {
    return NaN;
  }
}

const BARE = `Deno.serve({ hostname: "127.0.0.1", port: Number(Deno.env.get("PORT")) }, ` +
  `() => new Response("ok"));`;

interface Sample {
  healthz: number;
  firstRun: number;
  cpuAtHealthz: number;
}

async function once(target: string, fakeUrl: string): Promise<Sample> {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "agentd-cold-" });
  const env: Record<string, string> = {
    AGENT__RUNTIME__LOG_LEVEL: "warn",
    AGENT__STORAGE__PATH: `${dir}/agentd.db`,
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: `${fakeUrl}/v1`,
    PORT: String(port),
  };
  let args: string[];
  if (target === "bare") {
    const file = `${dir}/bare.ts`;
    await Deno.writeTextFile(file, BARE);
    args = ["run", "-A", file];
  } else if (target === "serverless") {
    env.AGENTD_MANIFEST = `${root}examples/openai/agent.hcl`;
    args = [
      "serve",
      "--config",
      `${root}deno.json`,
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--deny-run",
      "--deny-write",
      "--deny-ffi",
      "--no-prompt",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      `${root}serverless.ts`,
    ];
    delete env.AGENT__STORAGE__PATH;
    env.AGENT__STORAGE__URL = Deno.env.get("AGENTD_BENCH_POSTGRES_URL") ??
      "postgres://postgres@127.0.0.1:5432/test";
    env.AGENT__STORAGE__SCHEMA = `cold_${crypto.randomUUID().slice(0, 8)}`;
  } else {
    const manifest = target === "quickstart" ? "quickstart" : "openai";
    args = [
      "run",
      "-A",
      "--no-prompt",
      `${root}main.ts`,
      "serve",
      `${root}examples/${manifest}/agent.hcl`,
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
    ];
  }
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: dir,
    env,
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const url = `http://127.0.0.1:${port}`;
  try {
    let healthz = NaN;
    let cpuAtHealthz = NaN;
    const exited = child.status.then(() => true);
    while (performance.now() - started < 30_000) {
      if (await Promise.race([exited, Promise.resolve(false)])) throw new Error("exited");
      try {
        const res = await fetch(`${url}/healthz`);
        await res.body?.cancel();
        if (res.status === 200) {
          healthz = performance.now() - started;
          cpuAtHealthz = cpuMs(child.pid);
          break;
        }
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 2));
    }
    let firstRun = NaN;
    if (target !== "bare") {
      const res = await fetch(`${url}/v1/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: [{ type: "text", value: "hi" }] }],
        }),
      });
      const text = await res.text();
      if (!text.includes("run_finished")) throw new Error(`${target}: ${res.status} ${text}`);
      firstRun = performance.now() - started;
    }
    return { healthz, firstRun, cpuAtHealthz };
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    throw new Error(`${target}: ${error}\n${await stderr}`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    if (env.AGENT__STORAGE__SCHEMA) {
      await dropSchema(env.AGENT__STORAGE__URL, env.AGENT__STORAGE__SCHEMA);
    }
  }
}

async function dropSchema(url: string, schema: string) {
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, { onnotice: () => {} });
  await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  await sql.end();
}

function summary(values: number[]): string {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return "–";
  const mid = sorted[Math.floor(sorted.length / 2)];
  return `${Math.round(mid)} [${Math.round(sorted[0])}–${Math.round(sorted.at(-1)!)}]`;
}

const fake = fakeOpenAi();
const fakeUrl = `http://127.0.0.1:${fake.addr.port}`;
const results = new Map<string, Sample[]>(TARGETS.map((t) => [t, []]));
// Alternate the targets so that a change of load on the machine hits each alike.
for (let i = 0; i < RUNS; i++) {
  for (const target of TARGETS) results.get(target)!.push(await once(target, fakeUrl));
}
await fake.shutdown();
const [load] = Deno.loadavg();
console.log(`cold start, ${RUNS} runs each, load average ${load.toFixed(2)}; median [min–max] ms`);
console.log("| target | first /healthz 200 | first run answered | CPU ms at /healthz |");
console.log("| --- | --: | --: | --: |");
for (const [target, samples] of results) {
  console.log(
    `| ${target} | ${summary(samples.map((s) => s.healthz))} | ${
      summary(samples.map((s) => s.firstRun))
    } | ${summary(samples.map((s) => s.cpuAtHealthz))} |`,
  );
}
