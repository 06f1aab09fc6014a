/**
 * The AI SDK add-on over real HTTP, driven by the official `ai` package (`DefaultChatTransport` and
 * the chat `useChat` is built on): text, a server tool with its data parts, a client tool, an
 * approval (granted and refused), a failed run, a second turn, and resume after a dropped
 * connection. On SQLite with one server, and on PostgreSQL + Redis with two replicas (the resume
 * on the other replica). Every stream is checked chunk by chunk (chat.ts `checkStream`).
 */
import assert from "node:assert/strict";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";
import type { Message } from "../../../src/api/schemas.ts";
import {
  assertError,
  eventually,
  pacedModel,
  slowTest,
  startServerProcess,
  startTestServer,
  testPostgresUrl,
  testRedisUrl,
  type TestServer,
  uniqueName,
} from "../../_kit/mod.ts";
import { APPROVAL_TOOL, fixture } from "../ag_ui/helpers.ts";
import { Chat, ChatFetch, textOf, transport } from "./chat.ts";

const manifest = {
  agent: { name: "ai-sdk-test", model: { provider: "echo" } },
  tool: {
    progress: {
      kind: "javascript",
      module: fixture("progress_tool.js"),
      description: "reports progress and counts its calls in the state",
      parameters: { type: "object", properties: { steps: { type: "integer" } } },
    },
    delete_file: APPROVAL_TOOL,
  },
  http_server: { protocol: { ai_sdk: {} } },
};

const GET_LOCATION = {
  name: "get_location",
  description: "the user's location (the browser answers)",
  parameters: { type: "object", properties: {} },
};

const slow = (delay_ms: number) => ({
  model: pacedModel(delay_ms),
});

async function storedMessages(t: TestServer, sessionId: string): Promise<Message[]> {
  const res = await t.fetch(`/v1/sessions/${sessionId}/messages?per_page=1000`);
  assert.equal(res.status, 200);
  return (await res.json()).items;
}

/** The chat's last message, an assistant one. */
function answer(chat: Chat): UIMessage {
  const last = chat.messages.at(-1);
  assert.equal(last?.role, "assistant");
  return last!;
}

/** The tool parts of a message. */
function toolParts(message: UIMessage): Record<string, unknown>[] {
  return message.parts.filter((p) => p.type.startsWith("tool-")) as Record<string, unknown>[];
}

/** `a` serves the chats; `b` is where a reloaded page resumes (another replica, or `a`). */
async function scenarios(tt: Deno.TestContext, a: TestServer, b: TestServer) {
  const recorder = new ChatFetch();
  const chatOn = (
    server: TestServer,
    options: Partial<ConstructorParameters<typeof Chat>[0]> = {},
    body = {},
  ) =>
    new Chat({
      id: crypto.randomUUID(),
      transport: transport(server.url, recorder, body),
      ...options,
    });

  await tt.step("text, then a second turn on the same chat", async () => {
    const chat = chatOn(a);
    await chat.sendMessage({ text: "hello there" });
    assert.equal(chat.status, "ready", String(chat.error));
    assert.equal(textOf(answer(chat)), "hello there");
    assert.deepEqual(answer(chat).metadata, {
      sessionId: chat.id,
      runId: answer(chat).id,
      status: "completed",
      // The echo model reports a token per word.
      usage: { inputTokens: 2, outputTokens: 2, totalTokens: 4 },
      modelFinishReason: "stop",
    });
    await chat.sendMessage({ text: "and again" });
    assert.equal(chat.status, "ready", String(chat.error));
    assert.deepEqual(chat.messages.map((m) => [m.role, textOf(m)]), [
      ["user", "hello there"],
      ["assistant", "hello there"],
      ["user", "and again"],
      ["assistant", "and again"],
    ]);
    const sent = recorder.exchanges.at(-1)!.body!;
    assert.equal(sent.id, chat.id);
    assert.equal(sent.trigger, "submit-message");
    assert.equal((sent.messages as unknown[]).length, 3, "the chat sends its whole history");
    // The session holds each message once: the user messages under the chat's ids.
    const stored = await storedMessages(a, chat.id);
    assert.deepEqual(stored.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
    assert.equal(stored[0].message_id, chat.messages[0].id);
    assert.equal(stored[2].message_id, chat.messages[2].id);
  });

  await tt.step("a server tool: its input, output, live updates and state as parts", async () => {
    const data: { type: string; data: unknown }[] = [];
    const chat = chatOn(a, { onData: (part) => void data.push(structuredClone(part)) });
    await chat.sendMessage({ text: '/call progress {"steps": 2}' });
    assert.equal(chat.status, "ready", String(chat.error));
    const message = answer(chat);
    const [call] = toolParts(message);
    assert.equal(call.type, "tool-progress");
    assert.equal(call.state, "output-available");
    assert.deepEqual(call.input, { steps: 2 });
    assert.deepEqual(call.output, { counter: 1 });
    // The emitted updates: each one delivered, the latest kept in the message.
    assert.deepEqual(data.filter((d) => d.type === "data-progress").map((d) => d.data), [
      { done: 1, total: 2 },
      { done: 2, total: 2 },
    ]);
    const parts = message.parts as Record<string, unknown>[];
    assert.deepEqual(parts.filter((p) => p.type === "data-progress").map((p) => p.data), [
      { done: 2, total: 2 },
    ]);
    assert.deepEqual(parts.filter((p) => p.type === "data-state").map((p) => p.data), [
      { counter: 1 },
    ]);
    assert.match(textOf(message), /progress returned: \{"counter":1\}/);
    assert.ok(parts.filter((p) => p.type === "step-start").length >= 2, "two model steps");
  });

  await tt.step("a client tool: onToolCall + addToolOutput continue the run", async () => {
    const calls: string[] = [];
    const chat: Chat = chatOn(a, {
      onToolCall: ({ toolCall }) => {
        calls.push(toolCall.toolName);
        void chat.addToolOutput({
          tool: "get_location",
          toolCallId: toolCall.toolCallId,
          output: { city: "Paris" },
        });
      },
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    }, { tools: [GET_LOCATION] });
    await chat.sendMessage({ text: "/call get_location" });
    await eventually(
      () => chat.status === "ready" && /returned/.test(textOf(chat.messages.at(-1))),
      {
        what: "the continuation's answer",
      },
    );
    assert.deepEqual(calls, ["get_location"]);
    assert.equal(chat.messages.length, 2, "the continuation completes the same message");
    const message = answer(chat);
    assert.match(textOf(message), /get_location returned: \{"city":"Paris"\}/);
    const [call] = toolParts(message);
    assert.equal(call.state, "output-available");
    const stored = await storedMessages(a, chat.id);
    assert.deepEqual(stored.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
    assert.deepEqual(stored[2].content, [{ type: "data", value: { city: "Paris" } }]);
  });

  for (const approved of [true, false]) {
    await tt.step(`an approval, ${approved ? "granted" : "refused"}`, async () => {
      const chat = chatOn(a, {
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      await chat.sendMessage({ text: '/call delete_file {"path": "/tmp/x"}' });
      assert.equal(chat.status, "ready", String(chat.error));
      const [asked] = toolParts(answer(chat));
      assert.equal(asked.state, "approval-requested");
      assert.equal(
        answer(chat).metadata && (answer(chat).metadata as { status: string }).status,
        "interrupted",
      );
      const approval = asked.approval as { id: string };
      await chat.addToolApprovalResponse({ id: approval.id, approved, reason: "checked" });
      await eventually(
        () => chat.status === "ready" && /returned/.test(textOf(chat.messages.at(-1))),
        { what: "the continuation's answer" },
      );
      assert.equal(chat.messages.length, 2);
      const [done] = toolParts(answer(chat));
      if (approved) {
        assert.equal(done.state, "output-available");
        assert.deepEqual(done.output, { deleted: "/tmp/x" });
        assert.match(textOf(answer(chat)), /delete_file returned: \{"deleted":"\/tmp\/x"\}/);
      } else {
        assert.equal(done.state, "output-denied");
        assert.match(textOf(answer(chat)), /the user rejected this tool call/);
      }
      assert.equal((answer(chat).metadata as { status: string }).status, "completed");
    });
  }

  await tt.step("a new message instead of an approval refuses it", async () => {
    const chat = chatOn(a);
    await chat.sendMessage({ text: '/call delete_file {"path": "/tmp/y"}' });
    assert.equal(toolParts(answer(chat))[0].state, "approval-requested");
    await chat.sendMessage({ text: "never mind" });
    assert.equal(chat.status, "ready", String(chat.error));
    assert.equal(textOf(answer(chat)), "never mind");
    const stored = await storedMessages(a, chat.id);
    assert.match(JSON.stringify(stored.find((m) => m.role === "tool")?.content), /rejected/);
  });

  await tt.step("a failed run: an error part, the chat in error", async () => {
    const errors: Error[] = [];
    const chat = chatOn(a, { onError: (e) => void errors.push(e) }, {
      model: { override: { provider: "openai-compatible", model: "none" } },
    });
    await chat.sendMessage({ text: "hello" });
    assert.equal(chat.status, "error");
    assert.match(errors[0]?.message ?? "", /no endpoint.*\(model_error\)/);
  });

  await tt.step("resume after a dropped connection, then after a reload elsewhere", async () => {
    const words = "one two three four five six seven eight nine ten eleven twelve";
    const chat = chatOn(a, {}, slow(60));
    recorder.dropAfterDeltas = 2;
    await chat.sendMessage({ text: words });
    assert.equal(chat.status, "error", "the connection was lost");
    const partial = textOf(chat.messages.at(-1));
    assert.ok(partial.length < words.length, `cut short: ${partial}`);
    // A page reloaded on the other replica, holding only the user message, resumes too.
    const reloaded = new Chat({
      id: chat.id,
      messages: chat.messages.slice(0, 1),
      transport: transport(b.url, recorder),
    });
    const [,] = await Promise.all([chat.resumeStream(), reloaded.resumeStream()]);
    for (const c of [chat, reloaded]) {
      assert.equal(c.status, "ready", String(c.error));
      assert.equal(c.messages.length, 2);
      assert.equal(textOf(answer(c)), words);
      assert.equal((answer(c).metadata as { status: string }).status, "completed");
    }
    assert.equal(answer(chat).id, answer(reloaded).id);
    // Nothing runs now: 204, and the chat stays as it is.
    const res = await b.fetch(`/ai-sdk/chat/${chat.id}/stream`);
    assert.equal(res.status, 204);
    await reloaded.resumeStream();
    assert.equal(reloaded.status, "ready");
    assert.equal(reloaded.messages.length, 2);
  });

  await tt.step("resume of a continuation shows the approved call again", async () => {
    const chat = chatOn(a, {
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    }, slow(80));
    await chat.sendMessage({ text: '/call delete_file {"path": "/tmp/z"}' });
    const [asked] = toolParts(answer(chat));
    const messageId = answer(chat).id;
    recorder.dropAfterDeltas = 1;
    await chat.addToolApprovalResponse({
      id: (asked.approval as { id: string }).id,
      approved: true,
    });
    await eventually(() => chat.status === "error", { what: "the continuation's drop" });
    const reloaded = new Chat({
      id: chat.id,
      messages: chat.messages.slice(0, 1),
      transport: transport(b.url, recorder),
    });
    await reloaded.resumeStream();
    assert.equal(reloaded.status, "ready", String(reloaded.error));
    const message = answer(reloaded);
    assert.equal(message.id, messageId, "the continuation completes the first run's message");
    const [call] = toolParts(message);
    assert.equal(call.type, "tool-delete_file");
    assert.deepEqual(call.input, { path: "/tmp/z" });
    assert.equal(call.state, "output-available");
    assert.match(textOf(message), /delete_file returned: \{"deleted":"\/tmp\/z"\}/);
  });

  await tt.step("every stream is a well-formed UI message stream", async () => {
    const streams = await recorder.checkAll();
    assert.ok(streams.length >= 12, `${streams.length} streams`);
  });

  await tt.step("requests it cannot run are refused before any stream", async () => {
    const post = (body: unknown) => a.fetch("/ai-sdk/chat", { method: "POST", json: body });
    const user = { id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] };
    await assertError(
      await post({ id: "c1", messages: [user], trigger: "regenerate-message" }),
      422000,
      { field: "trigger", rule: "unsupported" },
    );
    await assertError(await post({ id: "c1", messages: [] }), 422000, {
      field: "messages",
      rule: "nothing_to_run",
    });
    await assertError(
      await post({
        id: "c1",
        messages: [{
          id: "u2",
          role: "user",
          parts: [{ type: "file", url: "x", mediaType: "a/b" }],
        }],
      }),
      422000,
      { field: "messages.0.parts.0.type", rule: "unsupported_part" },
    );
    await assertError(await post({ messages: [user] }), 422000, { field: "id", rule: "required" });
  });
}

Deno.test("AI SDK add-on (sqlite)", async (tt) => {
  await using t = await startTestServer({ store: "sqlite", manifest });
  await scenarios(tt, t, t);
});

Deno.test({
  name: "AI SDK add-on (postgres + redis, two replicas)",
  ignore: !(testPostgresUrl && testRedisUrl),
}, async (tt) => {
  const schema = uniqueName("agentd_ai_sdk");
  const runtime = {
    pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") },
  };
  await using a = await startTestServer({
    store: "postgres",
    manifest: { ...manifest, runtime },
    shared: { schema },
    replicaId: "replica-a",
  });
  await using b = await startTestServer({
    store: "postgres",
    manifest: { ...manifest, runtime },
    shared: { schema },
    replicaId: "replica-b",
  });
  await scenarios(tt, a, b);
});

Deno.test("AI SDK add-on: a page on another origin (CORS)", async () => {
  const origin = "https://app.example.com";
  await using t = await startTestServer({
    manifest: {
      ...manifest,
      http_server: { ...manifest.http_server, cors: { allow_origins: [origin] } },
    },
  });
  const preflight = await fetch(`${t.url}/ai-sdk/chat`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type",
    },
  });
  await preflight.body?.cancel();
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), origin);
  // The official transport from that origin: the answer carries the CORS headers.
  const recorder = new ChatFetch();
  const chat = new Chat({
    id: crypto.randomUUID(),
    transport: transport(t.url, recorder, {}, { origin }),
  });
  await chat.sendMessage({ text: "from afar" });
  assert.equal(chat.status, "ready", String(chat.error));
  assert.equal(textOf(answer(chat)), "from afar");
  const headers = recorder.exchanges[0].headers!;
  assert.equal(headers.get("access-control-allow-origin"), origin);
  assert.match(headers.get("access-control-expose-headers") ?? "", /x-run-id/);
});

Deno.test("AI SDK add-on: API keys through the transport's headers; the stream metric", async () => {
  const key = "ai-sdk-test-key-0123456789";
  await using t = await startTestServer({
    manifest: { ...manifest, http_server: { ...manifest.http_server, auth: { api_keys: [key] } } },
  });
  const recorder = new ChatFetch();
  const errors: Error[] = [];
  const keyless = new Chat({
    id: crypto.randomUUID(),
    transport: transport(t.url, recorder),
    onError: (e) => void errors.push(e),
  });
  await keyless.sendMessage({ text: "hello" });
  assert.equal(keyless.status, "error");
  assert.equal(recorder.exchanges[0].status, 401);
  assert.match(errors[0]?.message ?? "", /401001|API key/);

  const authorization = `Bearer ${key}`;
  const chat = new Chat({
    id: crypto.randomUUID(),
    transport: transport(t.url, recorder, slow(60), { authorization }),
  });
  const sending = chat.sendMessage({ text: "one two three four five six seven eight" });
  // While the answer streams, the open-streams gauge counts it under the add-on's name.
  await eventually(async () => {
    const metrics = await (await t.fetch("/metrics", { headers: { authorization } })).text();
    return /agentd_streams_open\{kind="ai_sdk"\} 1\b/.test(metrics);
  }, { what: "an open ai_sdk stream in /metrics" });
  await sending;
  assert.equal(chat.status, "ready", String(chat.error));
  assert.equal(textOf(answer(chat)), "one two three four five six seven eight");
  // The resume endpoint needs the key too.
  const unkeyed = await t.fetch(`/ai-sdk/chat/${chat.id}/stream`);
  await unkeyed.body?.cancel();
  assert.equal(unkeyed.status, 401);
});

slowTest({
  name: "AI SDK add-on: resume on a replica in another process (postgres + redis)",
  ignore: !(testPostgresUrl && testRedisUrl),
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const schema = uniqueName("agentd_ai_sdk_proc");
  const pubsub = { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") };
  await using a = await startTestServer({
    store: "postgres",
    manifest: { ...manifest, runtime: { pubsub } },
    shared: { schema },
    replicaId: "replica-a",
  });
  await using b = await startServerProcess({
    name: "replica-b",
    manifest: {
      ...manifest,
      runtime: { storage: { url: testPostgresUrl, schema }, pubsub },
      http_server: { host: "127.0.0.1", port: 0, protocol: { ai_sdk: {} } },
    },
    env: { AGENT__REPLICA__ID: "replica-b" },
  });
  const recorder = new ChatFetch();
  const words = "one two three four five six seven eight nine ten eleven twelve";
  const chat = new Chat({
    id: crypto.randomUUID(),
    transport: transport(a.url, recorder, slow(60)),
  });
  recorder.dropAfterDeltas = 2;
  await chat.sendMessage({ text: words });
  assert.equal(chat.status, "error", "the connection was lost");
  const reloaded = new Chat({
    id: chat.id,
    messages: chat.messages.slice(0, 1),
    transport: transport(b.url, recorder),
  });
  await reloaded.resumeStream();
  assert.equal(reloaded.status, "ready", String(reloaded.error));
  assert.equal(textOf(answer(reloaded)), words);
  assert.equal(answer(reloaded).id, answer(chat).id);
  assert.equal(recorder.exchanges.at(-1)?.url, `${b.url}/ai-sdk/chat/${chat.id}/stream`);
});
