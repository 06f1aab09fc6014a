/**
 * Conversation helpers (engine/conversation.ts): which tool calls have no answer yet.
 */
import assert from "node:assert/strict";
import type { Message } from "../../src/api/schemas.ts";
import { unansweredToolCalls } from "../../src/engine/conversation.ts";

Deno.test("unansweredToolCalls finds calls without a tool message", () => {
  const m = (role: Message["role"], extra: Partial<Message> = {}): Message => ({
    message_id: crypto.randomUUID(),
    session_id: "s",
    run_id: null,
    role,
    content: [],
    created_at: "",
    ...extra,
  });
  const calls = unansweredToolCalls([
    m("assistant", {
      tool_calls: [{ id: "1", name: "a", arguments: {} }, { id: "2", name: "b", arguments: {} }],
    }),
    m("tool", { tool_call_id: "1" }),
  ]);
  assert.deepEqual(calls.map((c) => c.id), ["2"]);
});
