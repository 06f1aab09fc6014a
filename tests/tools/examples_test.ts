/**
 * The quickstart's example tools (examples/quickstart/tools) work as their manifest blocks
 * declare them (the same blocks docs/tools.md shows).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ManifestSchema } from "../../src/config/schema.ts";
import { buildTools } from "../../src/tools/mod.ts";
import { recordingContext } from "./helpers.ts";

const QUICKSTART = fileURLToPath(new URL("../../examples/quickstart", import.meta.url));

const tools = buildTools({
  baseDir: QUICKSTART,
  manifest: ManifestSchema.parse({
    agent: { name: "quickstart" },
    tool: {
      progress: {
        kind: "javascript",
        module: "tools/progress.ts",
        function: "run",
        timeout: 10_000,
      },
      word_count: {
        kind: "python",
        module: "tools/word_count.py",
        function: "count_words",
        timeout: 10_000,
      },
    },
  }),
});

Deno.test("example progress.ts: progress 0..1, then counter and last_task", async () => {
  const { ctx, events } = recordingContext({ counter: 2 });
  const outcome = await tools.get("progress")!.call({ task: "demo", steps: 2 }, ctx);
  assert.deepEqual(outcome, {
    result: { done: "demo", steps: 2 },
    is_error: false,
    state: {
      patch: [
        { op: "add", path: "/counter", value: 3 },
        { op: "add", path: "/last_task", value: "demo" },
      ],
    },
  });
  assert.deepEqual(events.map((e) => (e.value as { value: number }).value), [0, 0.5, 1]);
  assert.ok(events.every((e) => e.name === "progress"));
});

Deno.test("example progress.ts: works on an empty context", async () => {
  const { ctx } = recordingContext(null);
  const outcome = await tools.get("progress")!.call({ task: "first", steps: 1 }, ctx);
  assert.equal(outcome.is_error, false);
  assert.deepEqual(outcome.state, {
    patch: [
      { op: "add", path: "/counter", value: 1 },
      { op: "add", path: "/last_task", value: "first" },
    ],
  });
});

Deno.test("example word_count.py: a count, one progress event, the count in the state", async () => {
  const { ctx, events } = recordingContext({});
  const outcome = await tools.get("word_count")!.call({ text: "hello big  world" }, ctx);
  assert.deepEqual(outcome, {
    result: { words: 3, characters: 16 },
    is_error: false,
    state: { patch: [{ op: "add", path: "/last_word_count", value: 3 }] },
  });
  assert.deepEqual(events, [{ name: "progress", value: { value: 1, words: 3 } }]);
});
