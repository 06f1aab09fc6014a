/**
 * The events a run opened (engine/open_events.ts): each start gets its end, and everything open is
 * ended innermost first — text, calls, step.
 */
import assert from "node:assert/strict";
import { OpenEvents } from "../../src/engine/open_events.ts";

Deno.test("open events: a text message opens once and ends once", () => {
  const open = new OpenEvents();
  const kinds = [...open.text("m1", "a"), ...open.text("m1", "b"), ...open.textEnd()]
    .map((e) => e.kind);
  assert.deepEqual(kinds, [
    "text_message_start",
    "text_message_content",
    "text_message_content",
    "text_message_end",
  ]);
  assert.deepEqual([...open.textEnd()], [], "nothing open any more");
});

Deno.test("open events: everything open ends innermost first", () => {
  const open = new OpenEvents();
  open.stepStarted(3, "model");
  [...open.text("m1", "partial")];
  open.callStarted("c1", "add", "m1");
  open.callStarted("c2", "add", "m1");
  open.callEnded("c1");
  const closing = [...open.all()];
  assert.deepEqual(closing.map((e) => e.kind), [
    "text_message_end",
    "tool_call_end",
    "step_finished",
  ]);
  assert.equal((closing[1] as { tool_call_id: string }).tool_call_id, "c2");
  assert.deepEqual(closing[2], { ...closing[2], step: 3, step_name: "model" });
  assert.deepEqual([...open.all()], []);
});
