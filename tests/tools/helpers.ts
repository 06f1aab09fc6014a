/**
 * Shared helpers of the tool tests: specs from the real manifest schema and a recording ctx.
 */
import { fileURLToPath } from "node:url";
import { ToolSchema } from "../../src/config/schema/tool.ts";
import type { ToolSpec } from "../../src/tools/mod.ts";
import type { ToolCallContext } from "../../src/tools/types.ts";
import { eventually } from "../_kit/mod.ts";

/** Absolute path of a fixture file. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** A tool spec as the manifest schema would produce it (defaults included). */
export function spec(name: string, block: Record<string, unknown>): ToolSpec {
  return { ...ToolSchema.parse(block), name };
}

/** A ToolCallContext that records emitted events, with its abort controller. */
export function recordingContext(context: Record<string, unknown> | null = { counter: 1 }): {
  ctx: ToolCallContext;
  events: { name: string; value: unknown }[];
  controller: AbortController;
} {
  const events: { name: string; value: unknown }[] = [];
  const controller = new AbortController();
  return {
    ctx: {
      tenant_id: "tenant-1",
      session_id: "session-1",
      run_id: "run-1",
      tool_call_id: "call-1",
      context,
      emit: (name, value) => events.push({ name, value }),
      signal: controller.signal,
    },
    events,
    controller,
  };
}

/** The error message of an error outcome (its result is the message; the engine wraps it). */
export function errorText(result: unknown): string {
  if (typeof result !== "string") throw new Error(`not an error result: ${JSON.stringify(result)}`);
  return result;
}

/** Whether a process still runs (a zombie has exited: it only waits for its parent to reap it). */
export function isRunning(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Host pids of processes running `sleep <marker>` (a tool's child, seen from outside). */
export function marked(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline === `sleep\0${marker}\0` && isRunning(Number(entry.name))) {
        pids.push(Number(entry.name));
      }
    } catch { /* gone meanwhile */ }
  }
  return pids;
}

/** A marker no other process has: `sleep` takes it as a number of seconds. */
export function newMarker(): string {
  return `1000.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

/** Waits until `count` processes run `sleep <marker>` (0: none is left); false if they never do. */
export function markedCount(marker: string, count: number, within = 3000): Promise<boolean> {
  return eventually(() => marked(marker).length === count, {
    timeout: within,
    interval: 10,
    what: `${count} processes running sleep ${marker}`,
  }).then(() => true, () => false);
}

/** Waits until no process runs `sleep <marker>`. */
export function noneMarked(marker: string, within = 3000): Promise<boolean> {
  return markedCount(marker, 0, within);
}
