/**
 * Shared helpers of the tool tests: specs from the real manifest schema and a recording ctx.
 */
import { fileURLToPath } from "node:url";
import { ToolSchema } from "../../src/config/schema.ts";
import type { ToolSpec } from "../../src/tools/mod.ts";
import type { ToolCallContext } from "../../src/tools/types.ts";

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

/** The error message of an error outcome's result (`{ error }`). */
export function errorText(result: unknown): string {
  const error = (result as { error?: unknown } | null)?.error;
  if (typeof error !== "string") throw new Error(`not an error result: ${JSON.stringify(result)}`);
  return error;
}
