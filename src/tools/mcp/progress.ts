/**
 * MCP progress notifications of a call passed on to the run as `progress` custom events, bounded
 * in count and message length (a server can send as many as it likes).
 */
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/types"
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import type { ToolCallContext } from "../types.ts";

/** Progress notifications passed on per call. */
export const MAX_PROGRESS_EVENTS = 1000;
/** The longest progress message passed on, in characters. */
export const MAX_PROGRESS_MESSAGE = 1000;

/** The `onprogress` of one call of the tool the model knows as `model`. */
export function progressSink(model: string, ctx: ToolCallContext): (p: Progress) => void {
  let sent = 0;
  return (p) => {
    if (sent++ >= MAX_PROGRESS_EVENTS) return;
    const message = typeof p.message === "string"
      ? p.message.slice(0, MAX_PROGRESS_MESSAGE)
      : undefined;
    try {
      ctx.emit("progress", {
        tool: model,
        progress: p.progress,
        ...(p.total !== undefined ? { total: p.total } : {}),
        ...(message !== undefined ? { message } : {}),
      });
    } catch { /* a failing event sink must not fail the call */ }
  };
}
