/**
 * The pure request mapping (parts, output modes, resume answers), the record → task view and the
 * Agent Card, without a server.
 */
import assert from "node:assert/strict";
import { AgentCard as SdkAgentCard, Task as SdkTask, TaskState } from "@a2a-js/sdk";
import type { Message as NativeMessage, Run } from "../../../src/api/schemas.ts";
import { ManifestSchema } from "../../../src/config/schema.ts";
import { agentCard, baseUrl, skills } from "../../../src/protocols/a2a/card.ts";
import { A2aError } from "../../../src/protocols/a2a/errors.ts";
import {
  checkParts,
  clientTools,
  mergedContext,
  outputModes,
  type PendingCall,
  pendingCalls,
  resumeAnswers,
  userInput,
} from "../../../src/protocols/a2a/request.ts";
import type { MessageInput } from "../../../src/protocols/a2a/schemas.ts";
import {
  AGENTD_EXTENSIONS,
  buildTask,
  noteMessage,
  taskState,
  turnNote,
} from "../../../src/protocols/a2a/task.ts";

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof A2aError, `an A2aError, got ${err}`);
    return err.reason;
  }
  assert.fail("expected an error");
}

const message = (parts: MessageInput["parts"]): MessageInput => ({
  messageId: "m1",
  role: "ROLE_USER",
  parts,
});

Deno.test("mapping: run status → task state", () => {
  assert.equal(taskState("running"), "TASK_STATE_WORKING");
  assert.equal(taskState("completed"), "TASK_STATE_COMPLETED");
  assert.equal(taskState("failed"), "TASK_STATE_FAILED");
  assert.equal(taskState("cancelled"), "TASK_STATE_CANCELED");
  assert.equal(taskState("interrupted"), "TASK_STATE_INPUT_REQUIRED");
});

Deno.test("mapping: text parts are user text, data parts structured input", () => {
  const input = userInput(message([{ text: "hi " }, { data: { a: 1 } }, { text: "there" }]));
  assert.deepEqual(input.content, [
    { type: "text", value: "hi " },
    { type: "data", value: { a: 1 } },
    { type: "text", value: "there" },
  ]);
  assert.deepEqual(input.data, [{ a: 1 }]);
  assert.deepEqual(mergedContext({ a: 0, keep: true }, [{ a: 1 }, { b: 2 }]), {
    a: 1,
    keep: true,
    b: 2,
  });
  assert.equal(mergedContext({ a: 0 }, []), undefined, "no data: the session's context stays");
});

Deno.test("mapping: a data part holds any JSON value; only objects reach the context", () => {
  const values = [[1, 2], "s", 3, false, null, { k: "v" }];
  const input = userInput(message(values.map((data) => ({ data }))));
  assert.deepEqual(input.content, values.map((value) => ({ type: "data", value })));
  assert.deepEqual(input.data, [{ k: "v" }]);
  checkParts([{ data: null }]);
});

Deno.test("mapping: raw and URL parts are refused as unsupported content", () => {
  assert.equal(
    reasonOf(() => checkParts([{ raw: "aGk=", mediaType: "image/png" }])),
    "CONTENT_TYPE_NOT_SUPPORTED",
  );
  assert.equal(
    reasonOf(() => checkParts([{ url: "https://x/y.png" }])),
    "CONTENT_TYPE_NOT_SUPPORTED",
  );
  assert.equal(reasonOf(() => checkParts([{}])), "INVALID_PARAMS");
  assert.equal(reasonOf(() => checkParts([{ text: "a", data: {} }])), "INVALID_PARAMS");
  checkParts([{ text: "a" }, { data: { b: 1 } }]);
});

Deno.test("mapping: accepted output modes", () => {
  assert.deepEqual(outputModes(undefined), { text: true, json: true });
  assert.deepEqual(outputModes([]), { text: true, json: true });
  assert.deepEqual(outputModes(["text/plain"]), { text: true, json: false });
  assert.deepEqual(outputModes(["application/json"]), { text: false, json: true });
  assert.deepEqual(outputModes(["text/*"]), { text: true, json: false });
  assert.deepEqual(outputModes(["*/*"]), { text: true, json: true });
  assert.deepEqual(outputModes(["Text/Plain; charset=utf-8"]), { text: true, json: false });
  assert.equal(reasonOf(() => outputModes(["image/png"])), "CONTENT_TYPE_NOT_SUPPORTED");
});

const approval = (id: string): PendingCall => ({
  tool_call_id: id,
  tool_name: "pay",
  arguments: { amount: 5 },
  kind: "approval",
});
const clientCall = (id: string): PendingCall => ({
  tool_call_id: id,
  tool_name: "get_location",
  arguments: {},
  kind: "client_tool",
});

Deno.test("mapping: approvals answered by yes/no text or an approved data part", () => {
  const pending = [approval("c1"), approval("c2")];
  assert.deepEqual(resumeAnswers(pending, message([{ text: " Yes! " }])), {
    approvals: [{ tool_call_id: "c1", approved: true }, { tool_call_id: "c2", approved: true }],
  });
  assert.deepEqual(resumeAnswers([approval("c1")], message([{ text: "no" }])), {
    approvals: [{ tool_call_id: "c1", approved: false }],
  });
  assert.deepEqual(
    resumeAnswers([approval("c1")], message([{ data: { approved: false, reason: "too much" } }])),
    { approvals: [{ tool_call_id: "c1", approved: false, reason: "too much" }] },
  );
  assert.equal(
    reasonOf(() => resumeAnswers([approval("c1")], message([{ text: "maybe later" }]))),
    "INVALID_PARAMS",
  );
});

Deno.test("mapping: one client tool call is answered by the message itself", () => {
  assert.deepEqual(resumeAnswers([clientCall("c1")], message([{ data: { city: "Paris" } }])), {
    tool_results: [{ tool_call_id: "c1", result: { city: "Paris" } }],
  });
  assert.deepEqual(resumeAnswers([clientCall("c1")], message([{ text: "Paris" }])), {
    tool_results: [{ tool_call_id: "c1", result: "Paris" }],
  });
});

Deno.test("mapping: several calls need the explicit form (snake_case or camelCase)", () => {
  const pending = [clientCall("c1"), approval("c2")];
  assert.equal(
    reasonOf(() => resumeAnswers(pending, message([{ text: "yes" }]))),
    "INVALID_PARAMS",
  );
  const explicit = {
    toolResults: [{ toolCallId: "c1", result: 1, isError: false }],
    approvals: [{ tool_call_id: "c2", approved: true }],
  };
  assert.deepEqual(resumeAnswers(pending, message([{ data: explicit }])), {
    tool_results: [{ tool_call_id: "c1", result: 1, is_error: false }],
    approvals: [{ tool_call_id: "c2", approved: true }],
  });
  assert.equal(
    reasonOf(() => resumeAnswers(pending, message([{ data: { approvals: [{ approved: 1 }] } }]))),
    "INVALID_PARAMS",
  );
});

Deno.test("mapping: pending calls are read defensively from interrupt_payload", () => {
  assert.deepEqual(pendingCalls(null), []);
  assert.deepEqual(pendingCalls({ reason: "max_steps", max_steps: 3 }), []);
  assert.deepEqual(
    pendingCalls({
      reason: "tool_calls",
      pending: [
        { tool_call_id: "c1", tool_name: "pay", arguments: { a: 1 }, kind: "approval" },
        { tool_call_id: 5, tool_name: "x", kind: "approval" },
        "junk",
      ],
    }),
    [{ tool_call_id: "c1", tool_name: "pay", arguments: { a: 1 }, kind: "approval" }],
  );
});

const run = (over: Partial<Run> = {}): Run => ({
  run_id: "r1",
  session_id: "s1",
  tenant_id: "default",
  status: "completed",
  attempt: 1,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:01.000Z",
  parent_checkpoint_id: null,
  checkpoint_id: "cp1",
  result: { text: "hello", context: null },
  interrupt_payload: null,
  error: null,
  usage: null,
  finish_reason: null,
  model_steps: [],
  warnings: [],
  cost: null,
  ...over,
});

const stored = (
  id: string,
  role: NativeMessage["role"],
  content: NativeMessage["content"],
  extra: Partial<NativeMessage> = {},
): NativeMessage => ({
  message_id: id,
  session_id: "s1",
  run_id: "r1",
  role,
  content,
  created_at: "2026-01-01T00:00:00.000Z",
  ...extra,
});

Deno.test("mapping: a run as a task (artifacts, history, historyLength, modes)", () => {
  const messages = [
    stored("u1", "user", [{ type: "text", value: "hi" }, { type: "data", value: { a: 1 } }]),
    stored("a1", "assistant", [], { tool_calls: [{ id: "c", name: "t", arguments: {} }] }),
    stored("t1", "tool", [{ type: "data", value: 1 }], { tool_call_id: "c" }),
    stored("a2", "assistant", [{ type: "text", value: "hello" }]),
  ];
  const chain = (context: Record<string, unknown> | null) => ({
    origin_run_id: "r1",
    runs: [{ run: run(), note: null, messages }],
    context,
  });
  const task = buildTask(chain({ a: 1 }));
  assert.equal(task.id, "r1");
  assert.equal(task.contextId, "s1");
  assert.deepEqual(task.status, {
    state: "TASK_STATE_COMPLETED",
    timestamp: "2026-01-01T00:00:01.000Z",
  });
  assert.deepEqual(task.artifacts?.map((a) => [a.artifactId, a.name, a.parts]), [
    ["a2", "response", [{ text: "hello" }]],
    ["state", "state", [{ data: { a: 1 }, mediaType: "application/json" }]],
  ]);
  assert.deepEqual(task.history?.map((m) => [m.messageId, m.role, m.parts.length]), [
    ["u1", "ROLE_USER", 2],
    ["a2", "ROLE_AGENT", 1],
  ]);
  assert.equal(buildTask(chain(null), { historyLength: 0 }).history, undefined);
  assert.deepEqual(
    buildTask(chain(null), { historyLength: 1 }).history?.map((m) => m.messageId),
    ["a2"],
  );
  assert.deepEqual(
    buildTask(chain({ a: 1 }), { modes: { text: false, json: true } }).artifacts
      ?.map((a) => a.artifactId),
    ["state"],
  );
  assert.equal(buildTask(chain(null), { includeArtifacts: false }).artifacts, undefined);
  const bare = {
    origin_run_id: "r1",
    runs: [{ run: run(), note: null, messages: [] }],
    context: null,
  };
  assert.deepEqual(buildTask(bare, { includeArtifacts: true }).artifacts, [], "asked: even empty");
  assert.equal(buildTask(bare).artifacts, undefined, "not asked: only when there are some");

  // The official SDK reads it as a v1.0 task.
  const decoded = SdkTask.fromJSON(JSON.parse(JSON.stringify(task)));
  assert.equal(decoded.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(decoded.artifacts[0].parts[0].content?.$case, "text");
  assert.equal(decoded.history.length, 2);
});

Deno.test("mapping: a task of several turns (a chain of runs)", () => {
  const waiting = run({
    status: "interrupted",
    result: null,
    interrupt_payload: {
      reason: "tool_calls",
      pending: [{ tool_call_id: "c1", tool_name: "pay", arguments: {}, kind: "approval" }],
    },
  });
  const answered = run({ run_id: "r2", updated_at: "2026-01-01T00:00:05.000Z" });
  const answer = turnNote(
    { messageId: "m2", role: "ROLE_USER", parts: [{ text: "yes" }] },
    "s1",
    "r1",
  );
  const task = buildTask({
    origin_run_id: "r1",
    runs: [
      {
        run: waiting,
        note: null,
        messages: [stored("u1", "user", [{ type: "text", value: "pay" }])],
      },
      {
        run: answered,
        note: answer,
        messages: [stored("a2", "assistant", [{ type: "text", value: "paid" }], { run_id: "r2" })],
      },
    ],
    context: null,
  });
  assert.equal(task.id, "r1", "the task is its first run");
  assert.deepEqual(task.status, {
    state: "TASK_STATE_COMPLETED",
    timestamp: "2026-01-01T00:00:05.000Z",
  });
  // Every turn: the request, the question asked, the answer (kept with the link), the reply.
  assert.deepEqual(task.history?.map((m) => [m.messageId, m.role, m.taskId]), [
    ["u1", "ROLE_USER", "r1"],
    ["r1:status", "ROLE_AGENT", "r1"],
    ["m2", "ROLE_USER", "r1"],
    ["a2", "ROLE_AGENT", "r1"],
  ]);
  assert.equal(noteMessage({ message: "junk" }), null);
  assert.equal(noteMessage(null), null);
});

Deno.test("mapping: the Agent Card from the manifest", () => {
  const manifest = ManifestSchema.parse({
    agent: {
      name: "helper",
      description: "helps",
      version: "2.3.4",
      capabilities: ["billing"],
    },
    capability: {
      billing: { description: "Pays bills", tools: ["pay"] },
      other: { tools: [] },
    },
    tool: { pay: { kind: "javascript", module: "/x.ts", requires_approval: true } },
    http_server: { protocol: { a2a: { path: "/agents/a2a/" } } },
  });
  const url = baseUrl(manifest, "http://127.0.0.1:9/whatever?x=1");
  assert.equal(url, "http://127.0.0.1:9/agents/a2a");
  const card = agentCard(manifest, url);
  assert.equal(card.name, "helper");
  assert.equal(card.version, "2.3.4");
  assert.deepEqual(card.supportedInterfaces, [
    { url: "http://127.0.0.1:9/agents/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: "http://127.0.0.1:9/agents/a2a", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
  ]);
  assert.deepEqual(card.capabilities, {
    streaming: true,
    pushNotifications: false,
    extendedAgentCard: false,
    extensions: AGENTD_EXTENSIONS,
  });
  assert.deepEqual(card.skills.map((s) => [s.id, s.description, s.tags]), [
    ["billing", "Pays bills", ["capability", "pay"]],
  ]);
  assert.deepEqual(
    agentCard(manifest, url, "acme").supportedInterfaces.map((i) => i.tenant),
    ["acme", "acme"],
  );

  const withPublic = ManifestSchema.parse({
    agent: { name: "p" },
    tool: { t: { kind: "javascript", module: "/x.ts", description: "does t" } },
    http_server: { public_url: "https://agents.example.com/base/", protocol: { a2a: {} } },
  });
  assert.equal(
    baseUrl(withPublic, "http://10.0.0.1:8080/a2a"),
    "https://agents.example.com/base/a2a",
  );
  assert.deepEqual(skills(withPublic).map((s) => [s.id, s.tags]), [["t", ["tool"]]]);
  const bare = ManifestSchema.parse({ agent: { name: "bare" } });
  assert.deepEqual(skills(bare).map((s) => [s.id, s.tags]), [["bare", ["chat"]]]);

  const decoded = SdkAgentCard.fromJSON(JSON.parse(JSON.stringify(card)));
  assert.deepEqual(decoded.supportedInterfaces.map((i) => i.protocolBinding), [
    "JSONRPC",
    "HTTP+JSON",
  ]);
  assert.equal(decoded.capabilities?.streaming, true);
});

Deno.test("mapping: client tools from the request's (or the message's) metadata.tools", () => {
  const tool = { name: "where", description: "d", parameters: { type: "object" } };
  assert.deepEqual(clientTools({ tools: [tool] }), [tool]);
  assert.deepEqual(clientTools(undefined, { tools: [tool] }), [tool]);
  assert.deepEqual(clientTools({ other: 1 }, null), []);
  assert.equal(
    reasonOf(() => clientTools({ tools: [{ name: "no spaces allowed" }] })),
    "INVALID_PARAMS",
  );
});
