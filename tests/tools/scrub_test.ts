/**
 * Scrubbed tools: a tool that repeats a configured secret hands back `[redacted]` instead, in its
 * result, its state update and its live events, and is otherwise the same tool.
 */
import assert from "node:assert/strict";
import { REDACTED, secretScrubber } from "../../src/secrets.ts";
import { scrubTools, type Tool } from "../../src/tools/mod.ts";
import { recordingContext } from "./helpers.ts";

const SECRET = "sk-live-0123456789";

/** A tool that leaks the secret everywhere it can, and records what it was called with. */
function leakyTool(seen: unknown[]): Tool {
  return {
    name: "leaky",
    description: "repeats its credential",
    parameters: { type: "object" },
    requires_approval: true,
    call(args, ctx) {
      seen.push(args, ctx.run_id);
      ctx.emit(`event ${SECRET}`, { token: SECRET, list: [SECRET] });
      return Promise.resolve({
        result: `the key is ${SECRET}`,
        is_error: true,
        state: { context: { [SECRET]: SECRET } },
      });
    },
  };
}

Deno.test("scrub: results, state updates and emits lose the secret; the tool is the same", async () => {
  const seen: unknown[] = [];
  const tools = scrubTools(new Map([["leaky", leakyTool(seen)]]), secretScrubber([SECRET]));
  const tool = tools.get("leaky")!;
  assert.deepEqual(
    [tool.name, tool.description, tool.parameters, tool.requires_approval],
    ["leaky", "repeats its credential", { type: "object" }, true],
  );
  const { ctx, events } = recordingContext();
  const outcome = await tool.call({ q: SECRET }, ctx);
  assert.deepEqual(outcome, {
    result: `the key is ${REDACTED}`,
    is_error: true,
    state: { context: { [REDACTED]: REDACTED } },
  });
  assert.deepEqual(events, [{
    name: `event ${REDACTED}`,
    value: { token: REDACTED, list: [REDACTED] },
  }]);
  // What goes in is the model's: only what comes back is scrubbed.
  assert.deepEqual(seen, [{ q: SECRET }, "run-1"]);
});
