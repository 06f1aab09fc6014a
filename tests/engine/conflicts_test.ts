/**
 * Conflicts inside one run request (issue 12, Deliver 7) over real HTTP on every protocol: two
 * messages with one id, a tool call id given twice, a call answered twice, a context variable
 * given twice, a client tool defined twice. Each is a validation error naming the field, and
 * nothing is written: no session, message, run or checkpoint appears, an existing session is
 * unchanged.
 */
import assert from "node:assert/strict";
import { assertError, readEvents, startTestServer, type TestServer } from "../_kit/mod.ts";

const user = (value: string, message_id?: string) => ({
  ...(message_id ? { message_id } : {}),
  role: "user",
  content: [{ type: "text", value }],
});
const tool = (name: string) => ({ name, description: "a client tool", parameters: {} });

/** Everything the store holds for the tenant's sessions named `ids`, to compare before/after. */
async function snapshot(t: TestServer, ids: string[]): Promise<string> {
  const store = t.server.store;
  const out: unknown[] = [];
  for (const id of ids) {
    const session = await store.getSession("default", id);
    out.push(
      session,
      session && await store.allMessages("default", id),
      session && await store.listRuns("default", id, {}, { per_page: 1000 }),
      session && await store.listCheckpoints("default", id, { per_page: 1000 }),
    );
  }
  return JSON.stringify(out);
}

Deno.test("conflicts inside one request are 422 before anything is written", async (tt) => {
  await using t = await startTestServer({
    manifest: { http_server: { protocol: { ag_ui: {}, a2a: {} } } },
  });
  // An existing session with one finished run, and a session id nobody has used yet.
  const first = await t.fetch("/v1/runs", {
    method: "POST",
    json: { session_id: "old", messages: [user("hello", "m0")] },
  });
  assert.equal((await readEvents(first)).at(-1)?.status, "completed");
  const sessions = ["old", "new"];
  const before = await snapshot(t, sessions);

  const native: [string, Record<string, unknown>, string, string][] = [
    [
      "two messages with one id",
      { messages: [user("a", "m1"), user("b", "m1")] },
      "messages.1.message_id",
      "duplicate_id",
    ],
    [
      "a tool call id given twice",
      {
        messages: [
          {
            role: "assistant",
            content: [],
            tool_calls: [
              { id: "c1", name: "x", arguments: {} },
              { id: "c1", name: "y", arguments: {} },
            ],
          },
          user("go on"),
        ],
      },
      "messages.0.tool_calls.1.id",
      "duplicate_id",
    ],
    [
      "a tool call answered twice",
      {
        messages: [
          {
            role: "assistant",
            content: [],
            tool_calls: [{ id: "c2", name: "x", arguments: {} }],
          },
          { role: "tool", tool_call_id: "c2", content: [{ type: "text", value: "1" }] },
          { role: "tool", tool_call_id: "c2", content: [{ type: "text", value: "2" }] },
        ],
      },
      "messages.2.tool_call_id",
      "duplicate_answer",
    ],
    [
      "a context variable given twice",
      {
        messages: [user("hi")],
        context_vars: [
          { description: "user name", value: "Ada" },
          { description: "user name", value: "Bob" },
        ],
      },
      "context_vars.1.description",
      "duplicate_context_var",
    ],
    [
      "a client tool defined twice",
      { messages: [user("hi")], tools: [tool("pick"), tool("pick")] },
      "tools.1.name",
      "duplicate_tool",
    ],
  ];
  for (const [what, body, field, code] of native) {
    for (const path of ["/v1/runs", "/v1/runs/start"]) {
      for (const session_id of sessions) {
        await tt.step(`${path}, ${session_id} session: ${what}`, async () => {
          const res = await t.fetch(path, { method: "POST", json: { session_id, ...body } });
          await assertError(res, 422000, { field, rule: code });
        });
      }
    }
  }

  const agUi: [string, Record<string, unknown>, string, string][] = [
    [
      "two messages with one id",
      {
        messages: [
          { id: "u1", role: "user", content: "a" },
          { id: "u1", role: "user", content: "b" },
        ],
      },
      "messages.1.id",
      "duplicate_id",
    ],
    [
      "a tool call answered twice",
      {
        messages: [
          {
            id: "a1",
            role: "assistant",
            toolCalls: [{ id: "c3", type: "function", function: { name: "x", arguments: "{}" } }],
          },
          { id: "t1", role: "tool", toolCallId: "c3", content: "1" },
          { id: "t2", role: "tool", toolCallId: "c3", content: "2" },
        ],
      },
      "messages.2.toolCallId",
      "duplicate_answer",
    ],
    [
      "a context variable given twice",
      {
        messages: [{ id: "u2", role: "user", content: "hi" }],
        context: [{ description: "city", value: "Oslo" }, { description: "city", value: "Rome" }],
      },
      "context.1.description",
      "duplicate_context_var",
    ],
    [
      "a client tool defined twice",
      { messages: [{ id: "u3", role: "user", content: "hi" }], tools: [tool("a"), tool("a")] },
      "tools.1.name",
      "duplicate_tool",
    ],
  ];
  for (const [what, body, field, code] of agUi) {
    for (const threadId of sessions) {
      await tt.step(`AG-UI, ${threadId} thread: ${what}`, async () => {
        const res = await t.fetch("/ag-ui/run", {
          method: "POST",
          json: { threadId, runId: crypto.randomUUID(), state: {}, forwardedProps: {}, ...body },
        });
        await assertError(res, 422000, { field, rule: code });
      });
    }
  }

  for (const contextId of sessions) {
    await tt.step(`A2A, ${contextId} context: a client tool defined twice`, async () => {
      const res = await t.fetch("/a2a/message:send", {
        method: "POST",
        json: {
          message: {
            messageId: crypto.randomUUID(),
            contextId,
            role: "ROLE_USER",
            parts: [{ text: "hi" }],
          },
          metadata: { tools: [tool("b"), tool("b")] },
        },
      });
      const body = await res.json();
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(body.error.status, "INVALID_ARGUMENT");
      const violations = body.error.details.find((d: { "@type": string }) =>
        d["@type"].endsWith("BadRequest")
      ).fieldViolations;
      assert.deepEqual(violations.map((v: { field: string }) => v.field), ["tools.1.name"]);
    });
  }

  await tt.step("nothing was written", async () => {
    assert.equal(await snapshot(t, sessions), before);
    assert.equal(await t.server.store.getSession("default", "new"), null);
    assert.ok(!t.logs.some((l) => /"level":"error"/.test(l)), "no error was logged");
  });
});
