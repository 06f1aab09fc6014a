/**
 * examples/mcp works as its comments say: served from its manifest, offline with the echo model,
 * its notes server started over stdio.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../../src/config/load.ts";
import { type EventData, startTestServer } from "../../_kit/mod.ts";
import { run, user } from "./helpers.ts";

const MANIFEST = fileURLToPath(new URL("../../../examples/mcp/agent.hcl", import.meta.url));

Deno.test("examples/mcp: the echo model uses the notes MCP server", async () => {
  const env = Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([k]) => !k.startsWith("AGENT__")),
  );
  // The manifest as loaded from its file (paths resolved), served on a free port with a test store.
  const { manifest } = await loadConfig(MANIFEST, env);
  await using t = await startTestServer({ manifest });
  const say = (text: string) => run(t, { session_id: "notes", messages: [user(text)] });
  const answer = (events: EventData[]) => (events.at(-1)!.result as { text: string }).text;
  assert.equal(
    answer(await say('/call notes__add_note {"text": "buy milk"}')),
    'notes__add_note returned: {"id":1,"count":1}',
  );
  await say('/call notes__add_note {"text": "call the plumber"}');
  assert.equal(
    answer(await say("/call notes__list_notes")),
    'notes__list_notes returned: "1. buy milk\\n2. call the plumber"',
  );
  const review = await say("/call notes__review");
  assert.deepEqual(
    review.filter((e) => e.kind === "custom").map((e) => [e.name, e.value]),
    [1, 2].map((i) => [
      "progress",
      { tool: "notes__review", progress: i, total: 2, message: `read note ${i}` },
    ]),
  );
  assert.equal(answer(review), 'notes__review returned: "2 notes, 5 words"');
  const forget = await say('/call notes__forget {"id": 42}');
  const result = forget.find((e) => e.kind === "tool_call_result")!;
  assert.equal(result.is_error, true);
  assert.match(JSON.stringify(result.content), /no note 42/);
});
