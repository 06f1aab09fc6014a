/** Stored messages in AG-UI form, as `MESSAGES_SNAPSHOT` carries them. */
import assert from "node:assert/strict";
import { toAgUiMessage } from "../../../src/protocols/ag_ui/messages.ts";
import { storedMessage as message } from "./helpers.ts";

Deno.test("stored messages in AG-UI form", () => {
  const assistant = message({
    role: "assistant",
    content: [{ type: "text", value: "let me" }, { type: "text", value: " look" }],
    tool_calls: [{ id: "c1", name: "lookup", arguments: { q: "x" } }],
  });
  assert.deepEqual(toAgUiMessage(assistant), {
    id: assistant.message_id,
    role: "assistant",
    content: "let me look",
    toolCalls: [{
      id: "c1",
      type: "function",
      function: { name: "lookup", arguments: '{"q":"x"}' },
    }],
  });
  const callsOnly = message({
    role: "assistant",
    content: [],
    tool_calls: [{ id: "c2", name: "t", arguments: {} }],
  });
  assert.ok(!("content" in toAgUiMessage(callsOnly)), "no text: content omitted");

  const data = message({
    role: "tool",
    content: [{ type: "data", value: { a: 1 } }],
    tool_call_id: "c1",
  });
  assert.deepEqual(toAgUiMessage(data), {
    id: data.message_id,
    role: "tool",
    toolCallId: "c1",
    content: '{"a":1}',
  });
  const text = message({
    role: "tool",
    content: [{ type: "text", value: "yes" }],
    tool_call_id: "c2",
  });
  assert.equal((toAgUiMessage(text) as { content: string }).content, "yes");
  const str = message({
    role: "tool",
    content: [{ type: "data", value: "plain" }],
    tool_call_id: "c3",
  });
  assert.equal((toAgUiMessage(str) as { content: string }).content, "plain");
  const system = message({ role: "system", content: [{ type: "text", value: "be brief" }] });
  assert.deepEqual(toAgUiMessage(system), {
    id: system.message_id,
    role: "system",
    content: "be brief",
  });
});
