/**
 * MCP progress notifications as `progress` events: passed on as they come, bounded in number and
 * message length, and never failing the call.
 */
import assert from "node:assert/strict";
import {
  MAX_PROGRESS_EVENTS,
  MAX_PROGRESS_MESSAGE,
  progressSink,
} from "../../../src/tools/mcp/progress.ts";
import { recordingContext } from "../helpers.ts";

Deno.test("progress: notifications become progress events of the tool", () => {
  const { ctx, events } = recordingContext();
  const sink = progressSink("srv__tool", ctx);
  sink({ progress: 1 });
  sink({ progress: 2, total: 4, message: "half" });
  assert.deepEqual(events, [
    { name: "progress", value: { tool: "srv__tool", progress: 1 } },
    { name: "progress", value: { tool: "srv__tool", progress: 2, total: 4, message: "half" } },
  ]);
});

Deno.test("progress: a chatty server is cut off in count and message length", () => {
  const { ctx, events } = recordingContext();
  const sink = progressSink("t", ctx);
  for (let i = 0; i < MAX_PROGRESS_EVENTS + 10; i++) {
    sink({ progress: i, message: "m".repeat(MAX_PROGRESS_MESSAGE + 5) });
  }
  assert.equal(events.length, MAX_PROGRESS_EVENTS);
  const value = events[0].value as { message: string };
  assert.equal(value.message.length, MAX_PROGRESS_MESSAGE);
});

Deno.test("progress: a failing event sink does not fail the call", () => {
  const { ctx } = recordingContext();
  const sink = progressSink("t", {
    ...ctx,
    emit: () => {
      throw new Error("sink down");
    },
  });
  sink({ progress: 1 });
});
