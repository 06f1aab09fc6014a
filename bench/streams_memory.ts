/**
 * Memory of open paced streams (issue 24): agentd (`main.ts serve`, SQLite, the `openai` provider)
 * holds N attached runs whose model streams a token every `--interval-ms`, each over its own HTTP
 * connection to a fake OpenAI server, and the server's RSS is read before and after.
 *
 *   deno run -A --no-prompt bench/streams_memory.ts [--streams 1000,5000,9000] [--interval-ms 5000]
 *
 * Each stream holds two of agentd's descriptors (the client's connection and the model's), so the
 * open-files limit (`ulimit -n`) bounds N at about half of it. The fake model runs in a process of
 * its own (this script with `--fake-model`); the clients run here and read every frame.
 */
import { parseArgs } from "node:util";
import { serveFakeModel } from "./_fake_model.ts";
import { type Proc, rssBytes, spawnServer as spawn } from "./_process.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    streams: { type: "string", default: "1000,5000,9000" },
    "interval-ms": { type: "string", default: "5000" },
    "fake-model": { type: "boolean", default: false },
  },
});
const INTERVAL_MS = Number(flags["interval-ms"]);

/** Opens one attached run and reads frames until its first token; it then stays open. */
async function openStream(url: string, signal: AbortSignal): Promise<boolean> {
  const res = await fetch(`${url}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      messages: [{ role: "user", content: [{ type: "text", value: "hi" }] }],
    }),
    signal,
  });
  if (res.status !== 200) {
    await res.body?.cancel();
    return false;
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("text_message_content")) {
    const next = await reader.read();
    if (next.done) return false;
    seen += next.value;
  }
  // Keep reading (and dropping) what comes, as a client of a paced stream does.
  void (async () => {
    while (!(await reader.read().catch(() => ({ done: true }))).done) { /* read on */ }
  })();
  return true;
}

/** Holds `count` streams open; returns how many were held and the server's RSS before and after. */
async function hold(server: Proc, count: number) {
  const controller = new AbortController();
  const before = await rssBytes(server.pid);
  let held = 0;
  for (let i = 0; i < count; i += 100) {
    const opened = await Promise.all(
      Array.from(
        { length: Math.min(100, count - i) },
        () => openStream(server.url, controller.signal).catch(() => false),
      ),
    );
    held += opened.filter(Boolean).length;
  }
  // Two token intervals: every stream has streamed since it opened.
  await new Promise((r) => setTimeout(r, 2 * INTERVAL_MS));
  const after = await rssBytes(server.pid);
  controller.abort();
  // Let the server finish the cancelled runs before the next level.
  await new Promise((r) => setTimeout(r, 5_000));
  return { held, before, after };
}

if (flags["fake-model"]) {
  serveFakeModel({ intervalMs: INTERVAL_MS });
} else {
  const dir = await Deno.makeTempDir({ prefix: "agentd_mem_" });
  const fake = await spawn([
    "run",
    "-A",
    "--no-prompt",
    "bench/streams_memory.ts",
    "--fake-model",
    "--interval-ms",
    String(INTERVAL_MS),
  ]);
  const manifest = {
    agent: {
      name: "mem",
      model: { provider: "openai", model: "fake", api_key: "sk-bench", base_url: `${fake.url}/v1` },
    },
    runtime: {
      storage: { path: `${dir}/mem.db` },
      log_level: "warn",
      runs: { max_concurrent: 100_000 },
    },
    http_server: { host: "127.0.0.1", port: 0, max_connections: 100_000 },
  };
  await Deno.writeTextFile(`${dir}/mem.json`, JSON.stringify(manifest));
  const server = await spawn(
    ["run", "-A", "--no-prompt", "main.ts", "serve", `${dir}/mem.json`, "--port", "0"],
    { AGENT__RUNTIME__LOG_LEVEL: "warn" },
  );
  const stop = () => {
    for (const p of [server, fake]) {
      try {
        p.child.kill("SIGKILL");
      } catch { /* gone */ }
    }
  };
  // Interrupted (or timed out): the two servers go too.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => {
      stop();
      Deno.exit(130);
    });
  }
  try {
    console.log(`| streams asked | held | RSS before MiB | RSS after MiB | KiB per stream |`);
    console.log(`| ---: | ---: | ---: | ---: | ---: |`);
    for (const count of flags.streams!.split(",").map(Number)) {
      const { held, before, after } = await hold(server, count);
      console.log(
        `| ${count} | ${held} | ${(before / 2 ** 20).toFixed(0)} | ${
          (after / 2 ** 20).toFixed(0)
        } | ${((after - before) / 1024 / Math.max(held, 1)).toFixed(1)} |`,
      );
    }
  } finally {
    stop();
    await Promise.all([server.child.status, fake.child.status]);
    await Deno.remove(dir, { recursive: true });
  }
}
