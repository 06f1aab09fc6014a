/**
 * Shared helpers of the MCP tests: how to start the stdio test server, runs over the native API,
 * and process checks.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type EventData, readEvents, type TestServer } from "../../_kit/mod.ts";

/** The repository's deno.json (the stdio server runs from elsewhere, where it is not found). */
export const DENO_JSON = fileURLToPath(new URL("../../../deno.json", import.meta.url));

/** The stdio test server script. */
export const STDIO_SERVER = fileURLToPath(new URL("./fixtures/stdio_server.ts", import.meta.url));

/** The command that starts the stdio test server. */
export const STDIO_COMMAND = [
  Deno.execPath(),
  "run",
  "-A",
  "--no-prompt",
  "--config",
  DENO_JSON,
  STDIO_SERVER,
];

/** A user message of the native API. */
export const user = (value: string) => ({ role: "user", content: [{ type: "text", value }] });

/** Starts a run, attached, and reads all its events. */
export async function run(
  t: TestServer,
  body: Record<string, unknown>,
  tenant?: string,
): Promise<EventData[]> {
  const res = await t.fetch("/v1/runs", { method: "POST", json: body, tenant });
  assert.equal(res.status, 200, await res.clone().text());
  return await readEvents(res);
}

/** The one tool result of a run's events. */
export function onlyResult(events: EventData[]): EventData {
  const results = events.filter((e) => e.kind === "tool_call_result");
  assert.equal(results.length, 1, JSON.stringify(events.map((e) => e.kind)));
  return results[0];
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function pidAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
