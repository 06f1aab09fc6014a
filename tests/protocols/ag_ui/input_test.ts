/** Request mapping of the AG-UI add-on: RunAgentInput (camelCase or snake_case) to a run request. */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import {
  NEW_THREAD,
  parseRunInput,
  relabel,
  type ThreadView,
  toRunRequest,
} from "../../../src/protocols/ag_ui/input.ts";
import type { OpenInterrupt } from "../../../src/protocols/ag_ui/interrupts.ts";

/** The fields of a 422, as `{ field: [codes] }`. */
function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 422);
    assert.equal(err.code, 422000);
    return Object.fromEntries(err.fields!.map((f) => [f.field, f.errors.map((e) => e.code)]));
  }
  assert.fail("expected a 422");
}

const map = (body: unknown, thread: ThreadView = NEW_THREAD) =>
  toRunRequest(parseRunInput(body), thread);

Deno.test("the official client's camelCase input", () => {
  const mapped = map({
    threadId: "t-1",
    runId: "r-1",
    parentRunId: "r-0",
    protocolVersion: "1.0",
    state: { cart: ["apple"] },
    messages: [
      { id: "u1", role: "user", content: "hello" },
      {
        id: "u2",
        role: "user",
        content: [{ type: "text", text: "a" }, { type: "text", text: "b" }],
      },
    ],
    tools: [{ name: "ask_user", description: "asks", parameters: { type: "object" } }, {
      name: "no_params",
      description: "",
    }],
    context: [{ description: "locale", value: "fr-FR" }],
    forwardedProps: { model: { timeout: 5000 }, somethingElse: true },
  });
  assert.deepEqual(mapped.request, {
    session_id: "t-1",
    run_id: "r-1",
    model: { timeout: 5000 },
    messages: [
      { message_id: "u1", role: "user", content: [{ type: "text", value: "hello" }] },
      {
        message_id: "u2",
        role: "user",
        content: [{ type: "text", value: "a" }, { type: "text", value: "b" }],
      },
    ],
    context_vars: [{ description: "locale", value: "fr-FR" }],
    context: { cart: ["apple"] },
    tools: [
      { name: "ask_user", description: "asks", parameters: { type: "object" } },
      { name: "no_params", description: "", parameters: { type: "object", properties: {} } },
    ],
    resume_payload: null,
  });
  assert.deepEqual(mapped.clientMessageIds, ["u1", "u2"]);
});

Deno.test("the same input in snake_case maps the same way", () => {
  const camel = map({
    threadId: "t-1",
    runId: "r-1",
    messages: [{ id: "a1", role: "assistant", toolCalls: [tc("c1", "f", "{}")] }, {
      id: "x1",
      role: "tool",
      toolCallId: "c1",
      content: "42",
    }],
    forwardedProps: { model: { override: { provider: "echo" } } },
  });
  const snake = map({
    thread_id: "t-1",
    run_id: "r-1",
    messages: [{ id: "a1", role: "assistant", tool_calls: [tc("c1", "f", "{}")] }, {
      id: "x1",
      role: "tool",
      tool_call_id: "c1",
      content: "42",
    }],
    forwarded_props: { model: { override: { provider: "echo" } } },
  });
  assert.deepEqual(snake.request, camel.request);
  assert.deepEqual(camel.request.messages[0].tool_calls, [{ id: "c1", name: "f", arguments: {} }]);
  assert.deepEqual(camel.request.model, { override: { provider: "echo" } });
});

Deno.test("ids: optional, generated when absent; both spellings must agree", () => {
  const bare = map({ messages: [{ role: "user", content: "hi" }] });
  assert.equal(bare.request.session_id, null);
  assert.equal(bare.request.run_id, null);
  assert.ok(!("message_id" in bare.request.messages[0]));
  assert.deepEqual(map({ threadId: "a", thread_id: "a", messages: [] }).request.session_id, "a");
  assert.deepEqual(
    fieldsOf(() => map({ threadId: "a", thread_id: "b", messages: [] })),
    { thread_id: ["conflict"] },
  );
});

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

Deno.test("invalid input is a 422 naming the client's fields", () => {
  assert.deepEqual(fieldsOf(() => map({})), { messages: ["required"] });
  assert.deepEqual(fieldsOf(() => map({ messages: [{ role: "robot", content: "x" }] })), {
    "messages.0.role": ["enum"],
  });
  assert.deepEqual(fieldsOf(() => map({ messages: [], state: [1, 2] })), { state: ["type"] });
  assert.deepEqual(fieldsOf(() => map({ threadId: "has space", messages: [] })), {
    threadId: ["format"],
  });
  assert.deepEqual(
    fieldsOf(() => map({ messages: [], forwarded_props: { model: { timeout: -1 } } })),
    { "forwarded_props.model.timeout": ["range"] },
  );
  assert.deepEqual(
    fieldsOf(() => map({ messages: [], forwardedProps: { model: { bogus: 1 } } })),
    { "forwardedProps.model.bogus": ["unknown_field"] },
  );
  assert.deepEqual(fieldsOf(() => map({ messages: [], tools: [{ name: "bad name!" }] })), {
    "tools.0.name": ["format"],
  });
  assert.deepEqual(
    fieldsOf(() =>
      map({
        messages: [
          {
            id: "u1",
            role: "user",
            content: [{ type: "image", source: { type: "url", value: "x" } }],
          },
          { id: "u1", role: "user", content: "again" },
          { id: "a1", role: "assistant", toolCalls: [tc("c1", "f", "[1]")] },
          { id: "a2", role: "assistant", tool_calls: [tc("c2", "f", "{oops")] },
          { id: "t1", role: "tool", content: "no call id" },
        ],
      })
    ),
    {
      "messages.0.content.0.type": ["unsupported_part"],
      "messages.1.id": ["duplicate_id"],
      "messages.2.toolCalls.0.function.arguments": ["json"],
      "messages.3.tool_calls.0.function.arguments": ["json"],
      "messages.4.toolCallId": ["required"],
    },
  );
});

const approval: OpenInterrupt = {
  id: "call_a",
  kind: "approval",
  call: { tool_call_id: "call_a", tool_name: "delete_file", arguments: {}, kind: "approval" },
};
const clientTool: OpenInterrupt = {
  id: "call_c",
  kind: "client_tool",
  call: { tool_call_id: "call_c", tool_name: "ask_user", arguments: {}, kind: "client_tool" },
};
const stepLimit: OpenInterrupt = {
  id: "r0:max_steps",
  kind: "run",
  reason: "max_steps",
};

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

function tc(id: string, name: string, args: string) {
  return { id, type: "function", function: { name, arguments: args } };
}
