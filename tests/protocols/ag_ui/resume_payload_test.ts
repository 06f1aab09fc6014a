/** AG-UI `resume` entries as the native `resume_payload`: each open interrupt answered once. */
import assert from "node:assert/strict";
import type { ThreadView } from "../../../src/protocols/ag_ui/request.ts";
import { approval, clientTool, fieldsOf, map, stepLimit } from "./mapping.ts";

Deno.test("resume entries become the native resume_payload", () => {
  const thread: ThreadView = { messageIds: new Set(), open: [approval, clientTool] };
  const resolved = map({
    threadId: "t",
    messages: [],
    resume: [
      { interruptId: "call_a", status: "resolved" },
      { interruptId: "call_c", status: "resolved", payload: { city: "Paris" } },
    ],
  }, thread);
  assert.deepEqual(resolved.request.resume_payload, {
    approvals: [{ tool_call_id: "call_a", approved: true }],
    tool_results: [{ tool_call_id: "call_c", result: { city: "Paris" } }],
  });

  const refused = map({
    thread_id: "t",
    messages: [],
    resume: [
      { interrupt_id: "call_a", status: "resolved", payload: { approved: false, reason: "no" } },
      { interrupt_id: "call_c", status: "cancelled" },
    ],
  }, thread);
  assert.deepEqual(refused.request.resume_payload, {
    approvals: [{ tool_call_id: "call_a", approved: false, reason: "no" }],
    tool_results: [{
      tool_call_id: "call_c",
      result: "the user cancelled this tool call",
      is_error: true,
    }],
  });

  const cancelled = map({
    threadId: "t",
    messages: [{ id: "t1", role: "tool", toolCallId: "call_c", content: "Paris" }],
    resume: [
      { interruptId: "call_a", status: "cancelled", payload: { reason: "not now" } },
      { interruptId: "call_c", status: "resolved" },
    ],
  }, thread);
  // the tool message answers the client tool; the entry only acknowledges its interrupt
  assert.deepEqual(cancelled.request.resume_payload, {
    approvals: [{ tool_call_id: "call_a", approved: false, reason: "not now" }],
  });
  assert.equal(cancelled.request.messages[0].tool_call_id, "call_c");
});

Deno.test("a run-level interrupt is resumed by simply continuing", () => {
  const mapped = map({
    threadId: "t",
    messages: [],
    resume: [{ interruptId: "r0:max_steps", status: "resolved" }],
  }, { messageIds: new Set(), open: [stepLimit] });
  assert.equal(mapped.request.resume_payload, null);
});

Deno.test("resume entries must answer the open interrupts, each once", () => {
  const thread: ThreadView = { messageIds: new Set(), open: [approval, clientTool] };
  assert.deepEqual(
    fieldsOf(() =>
      map({
        threadId: "t",
        messages: [],
        resume: [
          { interruptId: "call_a", status: "resolved" },
          { interruptId: "call_a", status: "cancelled" },
          { interruptId: "nope", status: "resolved" },
        ],
      }, thread)
    ),
    {
      "resume.1.interruptId": ["duplicate_answer"],
      "resume.2.interruptId": ["unknown_interrupt"],
      resume: ["missing_resume"],
    },
  );
  assert.deepEqual(
    fieldsOf(() =>
      map({ threadId: "t", messages: [], resume: [{ interruptId: "x", status: "resolved" }] })
    ),
    { "resume.0.interruptId": ["unknown_interrupt"] },
  );
  assert.deepEqual(
    fieldsOf(() => map({ messages: [], resume: [{ status: "resolved" }] })),
    { "resume.0.interruptId": ["required"] },
  );
  // an empty resume is no resume
  assert.equal(map({ messages: [], resume: [] }, thread).request.resume_payload, null);
});
