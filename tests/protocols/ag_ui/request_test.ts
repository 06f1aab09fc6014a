/** The native run request of an AG-UI run input: held messages, roles, state, error fields. */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import type { ThreadView } from "../../../src/protocols/ag_ui/request.ts";
import { relabelFields as relabel } from "../../../src/http/kit/mod.ts";
import { approval, clientTool, map } from "./mapping.ts";

Deno.test("messages the thread already holds are not sent again", () => {
  const thread: ThreadView = { messageIds: new Set(["u1", "a1"]), open: [] };
  const mapped = map({
    threadId: "t",
    messages: [
      { id: "u1", role: "user", content: "first (edited by the client: ignored)" },
      { id: "a1", role: "assistant", content: "answer" },
      { id: "u2", role: "user", content: "second" },
    ],
  }, thread);
  assert.deepEqual(mapped.request.messages, [
    { message_id: "u2", role: "user", content: [{ type: "text", value: "second" }] },
  ]);
  assert.deepEqual(mapped.clientMessageIds, ["u1", "a1", "u2"]);
  // only held messages: nothing new, which a resume-only run needs
  assert.deepEqual(
    map({ threadId: "t", messages: [{ id: "u1", role: "user", content: "x" }] }, thread)
      .request.messages,
    [],
  );
});

Deno.test("roles: developer is system, tool errors, reasoning and activity are skipped", () => {
  const mapped = map({
    messages: [
      { id: "d1", role: "developer", content: "be brief" },
      { id: "s1", role: "system", content: "you are a test" },
      { id: "r1", role: "reasoning", content: "thinking" },
      { id: "v1", role: "activity", activityType: "x", content: {} },
      { id: "t1", role: "tool", toolCallId: "c1", content: "", error: "denied" },
      { id: "t2", role: "tool", toolCallId: "c2", content: "partial", error: "boom" },
      { id: "a1", role: "assistant" },
    ],
  });
  assert.deepEqual(mapped.request.messages, [
    { message_id: "d1", role: "system", content: [{ type: "text", value: "be brief" }] },
    { message_id: "s1", role: "system", content: [{ type: "text", value: "you are a test" }] },
    {
      message_id: "t1",
      role: "tool",
      tool_call_id: "c1",
      content: [{ type: "data", value: { error: "denied" } }],
    },
    {
      message_id: "t2",
      role: "tool",
      tool_call_id: "c2",
      content: [{ type: "data", value: { error: "boom", content: "partial" } }],
    },
    { message_id: "a1", role: "assistant", content: [] },
  ]);
});

Deno.test("native validation errors are relabelled with the AG-UI fields", () => {
  const thread: ThreadView = { messageIds: new Set(["u0"]), open: [approval, clientTool] };
  const mapped = map({
    threadId: "t",
    messages: [
      { id: "u0", role: "user", content: "held" },
      { id: "t1", role: "tool", tool_call_id: "call_c", content: "x" },
    ],
    resume: [{ interruptId: "call_a", status: "resolved" }],
    forwarded_props: { model: { override: { provider: "nope" } } },
  }, thread);
  assert.equal(mapped.field("messages.0.tool_call_id"), "messages.1.tool_call_id");
  assert.equal(mapped.field("resume_payload.approvals.0.tool_call_id"), "resume.0.interruptId");
  assert.equal(mapped.field("resume_payload"), "resume");
  assert.equal(mapped.field("model.override.provider"), "forwarded_props.model.override.provider");
  assert.equal(mapped.field("context"), "state");
  assert.equal(mapped.field("context_vars.0.value"), "context.0.value");
  assert.equal(mapped.field("tools.1.name"), "tools.1.name");
  assert.equal(mapped.field("session_id"), "threadId");

  const plain = map({ messages: [{ role: "tool", toolCallId: "c", content: "x" }] });
  assert.equal(plain.field("resume_payload"), "messages", "tool messages are the answers");

  const err = new ApiError(422, 0, "validation failed", [{
    field: "model.override.provider",
    errors: [{ code: "unknown_provider" }],
  }]);
  const relabelled = relabel(err, mapped.field) as ApiError;
  assert.deepEqual(relabelled.fields, [{
    field: "forwarded_props.model.override.provider",
    errors: [{ code: "unknown_provider" }],
  }]);
  const other = new ApiError(409, 3, "busy");
  assert.equal(relabel(other, mapped.field), other);
});

Deno.test("state: an empty object keeps the thread's state, an object replaces it", () => {
  assert.equal(map({ messages: [], state: {} }).request.context, null);
  assert.equal(map({ messages: [], state: null }).request.context, null);
  assert.deepEqual(map({ messages: [], state: { a: 1 } }).request.context, { a: 1 });
});
