/**
 * Per-call cost of server-side tools (`deno task bench:tools`): the time from `tool.call()` to its
 * outcome for a JavaScript tool and a Python tool that return their arguments, measured in rounds.
 *
 * - "warm": one call at a time, each started once the tool is ready for it (`prepare()`), as when a
 *   model step separates two calls;
 * - "back to back": calls one after another without waiting, which also pays for starting the
 *   next sandbox process when the pool has none ready;
 * - "4 at once": four concurrent calls (latency of each).
 *
 * Then the limits issue 12 measured: a tool returning 50 MB and one emitting 100,000 events
 * (time to the outcome, and this process's RSS growth; both are refused at the default limits).
 *
 * Flags: --rounds N (default 5), --calls N (per round and mode, default 100), --only js|python.
 * Prints p50 and p95 per round and their spread over the rounds.
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { ToolSchema } from "../src/config/schema/tool.ts";
import { createJavaScriptTool, createPythonTool, type Tool } from "../src/tools/mod.ts";
import type { ToolCallContext } from "../src/tools/types.ts";

const { values: flags } = parseArgs({
  args: Deno.args,
  options: {
    rounds: { type: "string", default: "5" },
    calls: { type: "string", default: "100" },
    only: { type: "string" },
  },
});
const ROUNDS = Number(flags.rounds);
const CALLS = Number(flags.calls);

const fixture = (name: string) =>
  fileURLToPath(new URL(`./tool_fixtures/${name}`, import.meta.url));

/** A tool of the manifest schema's shape (defaults included). */
function spec(name: string, block: Record<string, unknown>) {
  return { ...ToolSchema.parse(block), name };
}

const ctx: ToolCallContext = {
  tenant_id: "bench",
  session_id: "bench",
  run_id: "bench",
  tool_call_id: "bench",
  context: { counter: 1 },
  emit: () => {},
  signal: new AbortController().signal,
};

/** What a tool may offer beyond `call` (a pool to fill, processes to stop). */
type Managed = Tool & { prepare?(): Promise<void>; close?(): Promise<void> };

async function timedCall(tool: Managed): Promise<number> {
  const started = performance.now();
  const outcome = await tool.call({ q: 1 }, ctx);
  const ms = performance.now() - started;
  if (outcome.is_error) throw new Error(`${tool.name}: ${JSON.stringify(outcome.result)}`);
  return ms;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];

interface Row {
  label: string;
  p50: number[];
  p95: number[];
}

async function measure(label: string, tool: Managed, mode: "warm" | "b2b" | "x4", rows: Row[]) {
  const row: Row = { label, p50: [], p95: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const times: number[] = [];
    if (mode === "x4") {
      for (let i = 0; i < CALLS; i += 4) {
        await tool.prepare?.();
        times.push(...await Promise.all([1, 2, 3, 4].map(() => timedCall(tool))));
      }
    } else {
      await tool.prepare?.();
      for (let i = 0; i < CALLS; i++) {
        if (mode === "warm") await tool.prepare?.();
        times.push(await timedCall(tool));
      }
    }
    times.sort((a, b) => a - b);
    row.p50.push(quantile(times, 0.5));
    row.p95.push(quantile(times, 0.95));
  }
  rows.push(row);
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(" ");
  console.log(`${label.padEnd(44)} p50 ${fmt(row.p50)} | p95 ${fmt(row.p95)}`);
}

const tools: [string, Managed][] = [];
if (flags.only !== "python") {
  tools.push([
    "javascript",
    createJavaScriptTool(spec("js", {
      kind: "javascript",
      module: fixture("echo.ts"),
    })),
  ]);
}
if (flags.only !== "js") {
  tools.push([
    "python",
    createPythonTool(spec("py", {
      kind: "python",
      module: fixture("echo.py"),
      function: "echo",
    })),
  ]);
}

console.log(`tool call latency, ms (${ROUNDS} rounds of ${CALLS} calls; one value per round)`);
const rows: Row[] = [];
try {
  for (const [label, tool] of tools) {
    await timedCall(tool); // first call: module cache, interpreter probe
    await measure(`${label}, warm`, tool, "warm", rows);
    await measure(`${label}, back to back`, tool, "b2b", rows);
    await measure(`${label}, 4 at once`, tool, "x4", rows);
  }
} finally {
  for (const [, tool] of tools) await tool.close?.();
}

console.log("\nlimits: time to the outcome, and RSS growth of this process");
// The hostile fixtures of tests/tools/isolation_test.ts (the same attacks, here timed).
const hostile = (name: string) =>
  fileURLToPath(new URL(`../tests/tools/fixtures/${name}`, import.meta.url));
const attacks = [
  ["javascript", "hostile.ts", "bigResult", "emitFlood"],
  ["python", "hostile.py", "big_result", "emit_flood"],
] as const;
for (const [kind, module, big, flood] of attacks) {
  if (flags.only && !kind.startsWith(flags.only === "js" ? "javascript" : flags.only)) continue;
  const runs = [["50 MB result", big, { mb: 50 }], ["100k emits", flood, { count: 100_000 }]];
  for (const [what, name, args] of runs as [string, string, Record<string, unknown>][]) {
    const block = { kind, module: hostile(module), function: name };
    const tool = kind === "javascript"
      ? createJavaScriptTool(spec(name, block))
      : createPythonTool(spec(name, block));
    let events = 0;
    const rss = Deno.memoryUsage().rss;
    const started = performance.now();
    const outcome = await tool.call(args, { ...ctx, emit: () => events++ });
    const ms = performance.now() - started;
    const grew = (Deno.memoryUsage().rss - rss) / 2 ** 20;
    await tool.close();
    const said = JSON.stringify(outcome.result).slice(0, 90);
    console.log(
      `${kind}, ${what}: ${ms.toFixed(0)} ms, +${grew.toFixed(1)} MiB, ${events} events: ${said}`,
    );
  }
}

console.log("\nsummary: median over rounds [min–max]");
console.log("| mode | p50 ms | p95 ms |\n| --- | --: | --: |");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs: number[]) =>
  `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`;
for (const row of rows) console.log(`| ${row.label} | ${spread(row.p50)} | ${spread(row.p95)} |`);
