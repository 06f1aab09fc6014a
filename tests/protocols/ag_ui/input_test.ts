/** Reading an AG-UI run input: both spellings of every field, and what is refused (422). */
import assert from "node:assert/strict";
import { fieldsOf, map, tc } from "./mapping.ts";

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
