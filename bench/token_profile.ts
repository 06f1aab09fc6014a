/**
 * Where a paced token's CPU goes (issue 24): agentd (`main.ts serve examples/openai/agent.hcl`,
 * SQLite) under `deno run --cpu-prof`, the peer harness's fake model streaming 200 tokens at
 * 50 tokens/s and its load generator holding `--concurrency` runs for `--duration` seconds; then
 * the main thread's samples grouped by layer (the nearest frame of `src/`, else where they ran)
 * and divided by the tokens served (runs in the store × 200).
 *
 *   deno run -A --no-prompt bench/token_profile.ts [--concurrency 100] [--duration 15]
 *     [--tree <agentd checkout>] [--peers ../shared/peers] [--profile <file.cpuprofile> ...]
 *
 * `--tree` profiles another checkout (a worktree of an older commit: before/after); `--profile`
 * only groups profiles already taken (the table then shows shares, not µs). Needs Node and
 * ../shared/peers (fake-llm, load).
 */
import { parseArgs } from "node:util";
import { DatabaseSync } from "node:sqlite";
import { freePort } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    concurrency: { type: "string", default: "100" },
    duration: { type: "string", default: "15" },
    tree: { type: "string", default: new URL("..", import.meta.url).pathname },
    profile: { type: "string", multiple: true },
    peers: { type: "string", default: new URL("../../shared/peers/", import.meta.url).pathname },
  },
});
const TOKENS = 200;
const peers = flags.peers.endsWith("/") ? flags.peers : `${flags.peers}/`;

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The layers, in the order of the table; the first rule that matches a `src/` path wins. */
const SRC_LAYERS: [string, (path: string) => boolean][] = [
  ["model intake: body read (fetch, our wrapper)", (f) => f.startsWith("models/observed_fetch")],
  [
    "model intake: parse and map to parts (ours)",
    (f) => /^models\/(sse_parts|openai_chat|openai_compatible|openai_stream_error)/.test(f),
  ],
  [
    "engine, model events, delivery, numbering, JSON",
    (f) =>
      /^(engine\/|models\/|runs\/(delivery|queue|runner)|api\/events|http\/v1\/encoder)/.test(f),
  ],
  ["pub/sub publish and history", (f) => f.startsWith("pubsub/")],
  ["SSE response (turn gathering, encoding)", (f) => f.startsWith("http/kit/sse")],
];
const OTHER = "store (SQLite, per run), routing, metrics, other";

function layerOf(id: number, nodes: Map<number, ProfileNode>, parent: Map<number, number>) {
  const frame = nodes.get(id)!.callFrame;
  if (frame.functionName === "(idle)") return undefined;
  if (["(program)", "(garbage collector)", "op_run_microtasks"].includes(frame.functionName)) {
    return "V8: (program), GC, microtasks";
  }
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const url = nodes.get(at)!.callFrame.url;
    if (url.includes("/src/") && !url.includes("registry.npmjs.org")) {
      const path = url.split("/src/")[1];
      return SRC_LAYERS.find(([, match]) => match(path))?.[0] ?? OTHER;
    }
  }
  const url = frame.url;
  if (
    ["writev", "write"].includes(frame.functionName) ||
    /_http_outgoing|writable\.js|stream_base_commons|net\.ts|_http_server/.test(url)
  ) return "socket writes, node:http";
  if (url.includes("registry.npmjs.org")) {
    return /ai-sdk|eventsource|zod/.test(url)
      ? "model intake: AI SDK (its streams, zod, transforms)"
      : OTHER;
  }
  if (/06_streams|01_core|00_infra/.test(url)) return "Web Streams machinery, no frame of ours";
  return OTHER;
}

/** Busy microseconds of the main thread by layer. */
function layers(profile: Profile): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const layer = layerOf(id, nodes, parent);
    if (layer) out.set(layer, (out.get(layer) ?? 0) + profile.timeDeltas[i]);
  });
  return out;
}

async function waitHttp(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered`);
}

/** Profiles agentd of `tree` under the paced load; the profile's path and the runs served. */
async function profileRun(tree: string): Promise<{ file: string; runs: number }> {
  const dir = await Deno.makeTempDir({ prefix: "agentd_token_profile_" });
  const fakePort = freePort();
  const port = freePort();
  const fake = new Deno.Command("node", {
    args: [`${peers}fake-llm/server.mjs`],
    env: { PORT: String(fakePort), FAKE_TOKENS: String(TOKENS), FAKE_DELAY_MS: "20" },
    stdout: "null",
  }).spawn();
  const agentd = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-prompt",
      "--cpu-prof",
      `--cpu-prof-dir=${dir}`,
      "main.ts",
      "serve",
      "examples/openai/agent.hcl",
    ],
    cwd: tree,
    env: {
      OPENAI_API_KEY: "sk-bench",
      OPENAI_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
      AGENT__STORAGE__PATH: `${dir}/agentd.db`,
      AGENT__RUNTIME__LOG_LEVEL: "warn",
      AGENT__HTTP__PORT: String(port),
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitHttp(`http://127.0.0.1:${fakePort}/health`);
    await waitHttp(`http://127.0.0.1:${port}/healthz`);
    const load = new Deno.Command("node", {
      args: [
        `${peers}load/load.mjs`,
        "--target",
        "agentd",
        "--url",
        `http://127.0.0.1:${port}`,
        "--concurrency",
        flags.concurrency,
        "--duration",
        flags.duration,
        "--warmup",
        "3",
        "--expect-tokens",
        String(TOKENS),
      ],
      stderr: "inherit",
    });
    console.log(new TextDecoder().decode((await load.output()).stdout).trim());
  } finally {
    for (const [child, signal] of [[agentd, "SIGINT"], [fake, "SIGTERM"]] as const) {
      try {
        child.kill(signal); // SIGINT: the profile is written as the process exits
      } catch { /* ended already */ }
      await child.status;
    }
  }
  const db = new DatabaseSync(`${dir}/agentd.db`, { readOnly: true });
  const { n } = db.prepare("SELECT count(*) AS n FROM runs").get() as { n: number };
  db.close();
  const file = [...Deno.readDirSync(dir)].map((e) => `${dir}/${e.name}`)
    .find((f) => f.endsWith(".cpuprofile") && !f.includes("worker"));
  if (!file) throw new Error(`no profile in ${dir}`);
  return { file, runs: n };
}

const given = flags.profile ?? [];
const taken = given.length > 0 ? [] : [await profileRun(flags.tree)];
const profiles = given.length > 0 ? given.map((file) => ({ file, runs: 0 })) : taken;
for (const { file, runs } of profiles) {
  const byLayer = layers(JSON.parse(Deno.readTextFileSync(file)) as Profile);
  const busy = [...byLayer.values()].reduce((a, b) => a + b, 0);
  const tokens = runs * TOKENS;
  console.log(
    `\n${file}: ${(busy / 1000).toFixed(0)} ms busy` +
      (tokens ? `, ${runs} runs, ${(busy / tokens).toFixed(1)} µs a token` : ""),
  );
  console.log("| layer | % | µs/token |\n| --- | ---: | ---: |");
  for (const [layer, us] of [...byLayer].sort((a, b) => b[1] - a[1])) {
    const perToken = tokens ? (us / tokens).toFixed(1) : "–";
    console.log(`| ${layer} | ${(100 * us / busy).toFixed(1)} | ${perToken} |`);
  }
}
