/**
 * The A2A add-on end to end: a real server, driven by the official `@a2a-js/sdk` client over its
 * REST (HTTP+JSON) transport, plus raw HTTP where the wire itself is the subject (error bodies,
 * requests the SDK would not send). Every task is checked against the native `/v1` record too.
 */
import assert from "node:assert/strict";
import {
  type Message,
  type Part,
  Role,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import { type Client, ClientFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import {
  eventually,
  parseSse,
  startTestServer,
  type StoreKind,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";

const fixtures = new URL("./fixtures/tools.ts", import.meta.url).pathname;

const agent = {
  name: "a2a-test",
  description: "An echo agent for the A2A tests",
  version: "1.2.3",
  model: { provider: "echo" },
};

const tools = {
  pay: {
    kind: "javascript",
    module: fixtures,
    function: "pay",
    description: "Pays an amount",
    requires_approval: true,
  },
  bump: { kind: "javascript", module: fixtures, function: "bump", description: "Counts" },
};

/** Fast echo, with tools. */
const fastManifest = { agent, tool: tools, http_server: { protocol: { a2a: {} } } };

/** Echo that waits between deltas, so a task is still working when we act on it. */
const slowManifest = {
  agent: {
    ...agent,
    model: { provider: "echo", inference_params: { provider_params: { delay_ms: 60 } } },
  },
  http_server: { protocol: { a2a: {} } },
};

const LONG_TEXT = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");

// --- SDK helpers -------------------------------------------------------------------------------

function text(value: string): Part {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" };
}

function data(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" };
}

function message(parts: Part[], extra: Partial<Message> = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

function request(
  msg: Message,
  configuration: Partial<SendMessageConfiguration> = {},
  extra: Partial<SendMessageRequest> = {},
): SendMessageRequest {
  return {
    tenant: "",
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
      ...configuration,
    },
    metadata: undefined,
    ...extra,
  };
}

function asTask(result: Task | Message): Task {
  assert.ok("status" in result, `a task, got ${JSON.stringify(result)}`);
  return result as Task;
}

/** The text of the task's `response` artifacts, in order. */
function artifactText(task: Task): string {
  return task.artifacts.filter((a) => a.name === "response").flatMap((a) => a.parts)
    .map((p) => p.content?.$case === "text" ? p.content.value : "").join("");
}

function stateOf(task: Task): unknown {
  const artifact = task.artifacts.find((a) => a.artifactId === "state");
  const part = artifact?.parts[0]?.content;
  return part?.$case === "data" ? part.value : undefined;
}

async function clientFor(t: TestServer): Promise<Client> {
  const factory = new ClientFactory({ transports: [new RestTransportFactory()] });
  // With the trailing slash the SDK resolves `.well-known/agent-card.json` under the base.
  return await factory.createFromUrl(`${t.url}/a2a/`);
}

/** Awaits `promise` to reject with an A2A error of `reason` (and HTTP `status`). */
async function rejects(promise: Promise<unknown>, reason: string, status: number): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    const e = err as Error & { reason?: string; statusCode?: number };
    assert.equal(e.reason, reason, `reason of ${e.name}: ${e.message}`);
    assert.equal(e.statusCode, status, `status of ${e.name}: ${e.message}`);
    return e;
  }
  assert.fail(`expected ${reason}`);
}

/** Reads a raw A2A error response: JSON, `google.rpc.Status` with an ErrorInfo. */
async function errorBody(res: Response, status: number, reason: string) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(body.error.code, status);
  assert.equal(typeof body.error.status, "string");
  assert.equal(typeof body.error.message, "string");
  const info = body.error.details.find((d: { "@type": string }) =>
    d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo"
  );
  assert.ok(info, JSON.stringify(body));
  assert.equal(info.reason, reason);
  return body.error;
}

async function nativeRun(t: TestServer, id: string, tenant?: string) {
  const res = await t.fetch(`/v1/runs/${id}`, { tenant });
  assert.equal(res.status, 200, await res.clone().text());
  return await res.json();
}

/** The native status a task state corresponds to. */
const NATIVE: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_WORKING]: "running",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_FAILED]: "failed",
  [TaskState.TASK_STATE_CANCELED]: "cancelled",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "interrupted",
};

async function assertSameAsNative(t: TestServer, task: Task, tenant?: string): Promise<void> {
  const run = await nativeRun(t, task.id, tenant);
  assert.equal(run.session_id, task.contextId);
  assert.equal(run.status, NATIVE[task.status!.state], `task ${task.id}`);
}

function payloadCase(event: StreamResponse): string {
  return event.payload?.$case ?? "none";
}

// --- tests ---------------------------------------------------------------------------------------

for (const store of storeKinds) {
  Deno.test(`a2a (${store}): discovery, send, stream, get, resume, data, tenants, errors`, (tt) =>
    mainSuite(tt, store));
  Deno.test(`a2a (${store}): return immediately, cancel, disconnect, subscribe`, (tt) =>
    slowSuite(tt, store));
}

async function mainSuite(tt: Deno.TestContext, store: StoreKind): Promise<void> {
  await using t = await startTestServer({ store, manifest: fastManifest });
  const client = await clientFor(t);

  await tt.step("the Agent Card is found from the base URL", async () => {
    const card = await client.getAgentCard();
    assert.equal(card.name, "a2a-test");
    assert.equal(card.description, "An echo agent for the A2A tests");
    assert.equal(card.version, "1.2.3");
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
      [
        [`${t.url}/a2a`, "JSONRPC", "1.0"],
        [`${t.url}/a2a`, "HTTP+JSON", "1.0"],
      ],
    );
    assert.equal(card.capabilities?.streaming, true);
    assert.equal(card.capabilities?.pushNotifications, false);
    assert.deepEqual(card.defaultInputModes, ["text/plain", "application/json"]);
    assert.deepEqual(card.defaultOutputModes, ["text/plain", "application/json"]);
    // No capability block: every tool is a skill.
    assert.deepEqual(card.skills.map((s) => s.id).sort(), ["bump", "pay"]);
    const raw = await t.fetch("/a2a/.well-known/agent-card.json");
    assert.match(raw.headers.get("content-type") ?? "", /^application\/json/);
  });

  await tt.step("send (blocking): the completed task, same as the native run", async () => {
    const task = asTask(await client.sendMessage(request(message([text("hello there")]))));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(artifactText(task), "hello there");
    assert.deepEqual(task.history.map((m) => m.role), [Role.ROLE_USER, Role.ROLE_AGENT]);
    assert.equal(task.history[0].parts[0].content?.value, "hello there");
    await assertSameAsNative(t, task);
    const session = await t.fetch(`/v1/sessions/${task.contextId}`);
    assert.equal(session.status, 200, "the context is a native session");
  });

  await tt.step("the message's id becomes the native message id", async () => {
    const msg = message([text("keep my id")]);
    const task = asTask(await client.sendMessage(request(msg)));
    assert.equal(task.history[0].messageId, msg.messageId);
    const res = await t.fetch(`/v1/sessions/${task.contextId}/messages/${msg.messageId}`);
    assert.equal(res.status, 200);
  });

  await tt.step("a contextId continues the session", async () => {
    const first = asTask(await client.sendMessage(request(message([text("first turn")]))));
    const second = asTask(
      await client.sendMessage(
        request(message([text("second turn")], { contextId: first.contextId })),
      ),
    );
    assert.equal(second.contextId, first.contextId);
    assert.notEqual(second.id, first.id);
    assert.equal(artifactText(second), "second turn");
    const list = await (await t.fetch(`/v1/sessions/${first.contextId}/messages`)).json();
    assert.deepEqual(
      list.items.filter((m: { role: string }) => m.role === "user").map((m: {
        content: { value: string }[];
      }) => m.content[0].value),
      ["first turn", "second turn"],
    );
    const runs = await (await t.fetch(`/v1/sessions/${first.contextId}/runs`)).json();
    assert.equal(runs.count, 2);
  });

  await tt.step("a client-chosen contextId starts that session", async () => {
    const contextId = `ctx-${crypto.randomUUID()}`;
    const task = asTask(await client.sendMessage(request(message([text("hi")], { contextId }))));
    assert.equal(task.contextId, contextId);
  });

  await tt.step("get with history (historyLength honoured)", async () => {
    const sent = asTask(await client.sendMessage(request(message([text("remember this")]))));
    const full = await client.getTask({ tenant: "", id: sent.id });
    assert.equal(full.history.length, 2);
    assert.equal(artifactText(full), "remember this");
    const last = await client.getTask({ tenant: "", id: sent.id, historyLength: 1 });
    assert.deepEqual(last.history.map((m) => m.role), [Role.ROLE_AGENT]);
    const none = await client.getTask({ tenant: "", id: sent.id, historyLength: 0 });
    assert.equal(none.history.length, 0);
    const res = await t.fetch(`/a2a/tasks/${sent.id}?historyLength=-1`);
    await errorBody(res, 400, "INVALID_PARAMS");
    const trimmed = asTask(
      await client.sendMessage(request(message([text("short")]), { historyLength: 0 })),
    );
    assert.equal(trimmed.history.length, 0, "configuration.historyLength on send");
  });

  await tt.step("stream: task, working, text chunks, state artifact, completed", async () => {
    const events: StreamResponse[] = [];
    for await (
      const event of client.sendMessageStream(
        request(message([text("stream me please"), data({ streamed: true })])),
      )
    ) events.push(event);
    const kinds = events.map(payloadCase);
    assert.deepEqual(kinds, [
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate",
    ]);
    const [first, working, ...rest] = events;
    assert.equal(first.payload?.$case, "task");
    const task = first.payload!.value as Task;
    assert.equal(task.status?.state, TaskState.TASK_STATE_SUBMITTED);
    assert.equal(
      working.payload?.$case === "statusUpdate" && working.payload.value.status?.state,
      TaskState.TASK_STATE_WORKING,
    );
    const chunks = rest.slice(0, 3).map((e) => {
      assert.equal(e.payload?.$case, "artifactUpdate");
      return e.payload!.value as {
        artifact: { artifactId: string; parts: Part[] };
        append: boolean;
        lastChunk: boolean;
        taskId: string;
      };
    });
    assert.deepEqual(chunks.map((c) => c.append), [false, true, true]);
    assert.deepEqual(chunks.map((c) => c.lastChunk), [false, false, true]);
    assert.ok(chunks.every((c) => c.taskId === task.id));
    const streamed = chunks.map((c) => c.artifact.parts[0].content?.value).join("");
    assert.equal(streamed, 'stream me please{"streamed":true}');
    const state = rest[3].payload?.value as { artifact: { artifactId: string; parts: Part[] } };
    assert.equal(state.artifact.artifactId, "state");
    assert.deepEqual(state.artifact.parts[0].content?.value, { streamed: true });
    const final = rest[4];
    assert.equal(
      final.payload?.$case === "statusUpdate" && final.payload.value.status?.state,
      TaskState.TASK_STATE_COMPLETED,
    );
    // The stored task says what the stream said.
    const read = await client.getTask({ tenant: "", id: task.id });
    assert.equal(read.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(artifactText(read), streamed);
    assert.equal(read.artifacts[0].artifactId, chunks[0].artifact.artifactId);
    assert.deepEqual(stateOf(read), { streamed: true });
    await assertSameAsNative(t, read);
  });

  await tt.step("stream frames on the wire carry a data line and their cursor id", async () => {
    const res = await t.fetch("/a2a/message:stream", {
      method: "POST",
      json: { message: { messageId: "wire-1", role: "ROLE_USER", parts: [{ text: "wire" }] } },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const { events } = parseSse(await res.text());
    for (const [i, frame] of events.entries()) {
      const { event, id, retry, data } = frame;
      assert.deepEqual([event, retry], [undefined, undefined], "no event or retry line");
      // The submitted task is made up by the route: it has no place in the run's sequence.
      if (i === 0) assert.equal(id, undefined);
      else assert.match(id ?? "", /^\d+(\.\d+)?$/, "the run event's sequence number");
      assert.ok(!data.includes("\n"), `one data line: ${data}`);
      const keys = Object.keys(JSON.parse(data));
      assert.equal(keys.length, 1);
      assert.ok(["task", "statusUpdate", "artifactUpdate"].includes(keys[0]));
    }
    assert.deepEqual(
      events.map((f) => Object.keys(JSON.parse(f.data))[0]),
      ["task", "statusUpdate", "artifactUpdate", "statusUpdate"],
    );
  });

  await tt.step("data parts reach the run's context (merged across a context)", async () => {
    const first = asTask(
      await client.sendMessage(
        request(message([text("with data"), data({ city: "Paris", n: 1 })])),
      ),
    );
    const run = await nativeRun(t, first.id);
    assert.deepEqual(run.result.context, { city: "Paris", n: 1 });
    assert.deepEqual(stateOf(first), { city: "Paris", n: 1 });
    const messages = await (await t.fetch(`/v1/sessions/${first.contextId}/messages`)).json();
    assert.deepEqual(messages.items[0].content, [
      { type: "text", value: "with data" },
      { type: "data", value: { city: "Paris", n: 1 } },
    ]);
    const second = asTask(
      await client.sendMessage(
        request(message([data({ n: 2 })], { contextId: first.contextId })),
      ),
    );
    assert.deepEqual((await nativeRun(t, second.id)).result.context, { city: "Paris", n: 2 });
    // A tool sees the context and may change it; the state artifact follows.
    const third = asTask(
      await client.sendMessage(
        request(message([text('/call bump {"by": 5}')], { contextId: first.contextId })),
      ),
    );
    assert.deepEqual(stateOf(third), { city: "Paris", n: 2, count: 5 });
    assert.match(artifactText(third), /bump returned: "count is 5"/);
  });

  await tt.step("accepted output modes select the artifacts", async () => {
    const task = asTask(
      await client.sendMessage(
        request(message([text("only json"), data({ j: 1 })]), {
          acceptedOutputModes: ["application/json"],
        }),
      ),
    );
    assert.deepEqual(task.artifacts.map((a) => a.artifactId), ["state"]);
    await rejects(
      client.sendMessage(
        request(message([text("x")]), { acceptedOutputModes: ["image/png"] }),
      ),
      "CONTENT_TYPE_NOT_SUPPORTED",
      400,
    );
  });

  await tt.step("approval: input-required, then a second message continues the task", async () => {
    const waiting = asTask(
      await client.sendMessage(request(message([text('/call pay {"amount": 5}')]))),
    );
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const status = waiting.status!.message!;
    assert.equal(status.role, Role.ROLE_AGENT);
    assert.match(String(status.parts[0].content?.value), /Approval needed for pay/);
    const pending = (status.parts[1].content?.value as { pending: Record<string, unknown>[] })
      .pending;
    assert.equal(pending.length, 1);
    assert.equal(pending[0].toolName, "pay");
    assert.equal(pending[0].kind, "approval");
    await assertSameAsNative(t, waiting);
    const read = await client.getTask({ tenant: "", id: waiting.id });
    assert.equal(read.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.deepEqual(
      read.status?.message?.parts[1].content?.value,
      status.parts[1].content?.value,
    );

    const resumed = asTask(
      await client.sendMessage(
        request(message([text("yes")], { taskId: waiting.id, contextId: waiting.contextId })),
      ),
    );
    assert.equal(resumed.id, waiting.id, "the same task");
    assert.equal(resumed.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(resumed.contextId, waiting.contextId);
    assert.match(artifactText(resumed), /pay returned: \{"paid":5\}/);
    // Natively: the first run stays interrupted, the turn that answered it is a second run.
    const runs = await (await t.fetch(`/v1/sessions/${resumed.contextId}/runs`)).json();
    assert.deepEqual(runs.items.map((r: { status: string }) => r.status), [
      "interrupted",
      "completed",
    ]);

    // Its calls are answered: the task takes no second answer.
    await rejects(
      client.sendMessage(request(message([text("yes")], { taskId: waiting.id }))),
      "UNSUPPORTED_OPERATION",
      400,
    );
  });

  await tt.step("approval refused with a data part", async () => {
    const waiting = asTask(
      await client.sendMessage(request(message([text('/call pay {"amount": 99}')]))),
    );
    await rejects(
      client.sendMessage(request(message([text("perhaps")], { taskId: waiting.id }))),
      "INVALID_PARAMS",
      400,
    );
    const refused = asTask(
      await client.sendMessage(
        request(message([data({ approved: false, reason: "too much" })], { taskId: waiting.id })),
      ),
    );
    assert.equal(refused.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(artifactText(refused), /rejected/);
    assert.match(artifactText(refused), /too much/);
  });

  await tt.step("a streamed answer to an input-required task", async () => {
    const waiting = asTask(
      await client.sendMessage(request(message([text('/call pay {"amount": 7}')]))),
    );
    const events: StreamResponse[] = [];
    for await (
      const event of client.sendMessageStream(
        request(message([data({ approved: true })], { taskId: waiting.id })),
      )
    ) events.push(event);
    assert.equal(events[0].payload?.$case, "task");
    const resumedId = (events[0].payload!.value as Task).id;
    const last = events.at(-1)!;
    assert.equal(
      last.payload?.$case === "statusUpdate" && last.payload.value.status?.state,
      TaskState.TASK_STATE_COMPLETED,
    );
    const read = await client.getTask({ tenant: "", id: resumedId });
    assert.equal(read.contextId, waiting.contextId);
    assert.match(artifactText(read), /pay returned: \{"paid":7\}/);
  });

  await tt.step("a run started natively is a task too", async () => {
    const res = await t.fetch("/v1/runs/start", {
      method: "POST",
      json: { messages: [{ role: "user", content: [{ type: "text", value: "native run" }] }] },
    });
    const { run_id, session_id } = await res.json();
    const task = await eventually(async () => {
      const read = await client.getTask({ tenant: "", id: run_id });
      return read.status?.state === TaskState.TASK_STATE_COMPLETED ? read : undefined;
    }, { timeout: 10_000, what: "the native run" });
    assert.equal(task.contextId, session_id);
    assert.equal(artifactText(task), "native run");
  });

  await tt.step("client tool (metadata.tools): input-required, answered with data", async () => {
    const metadata = {
      tools: [{
        name: "get_location",
        description: "Where the user is",
        parameters: { type: "object", properties: {} },
      }],
    };
    const events: StreamResponse[] = [];
    for await (
      const event of client.sendMessageStream(
        request(message([text("/call get_location {}")]), {}, { metadata }),
      )
    ) events.push(event);
    const last = events.at(-1)!;
    assert.equal(last.payload?.$case, "statusUpdate");
    const update = last.payload!.value as { taskId: string; status: Task["status"] };
    assert.equal(update.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const pending = (update.status?.message?.parts[1].content?.value as {
      pending: Record<string, unknown>[];
    }).pending;
    assert.deepEqual(pending.map((p) => [p.toolName, p.kind]), [["get_location", "client_tool"]]);

    const answered = asTask(
      await client.sendMessage(
        request(message([data({ city: "Paris" })], { taskId: update.taskId }), {}, { metadata }),
      ),
    );
    assert.equal(answered.id, update.taskId, "the same task");
    assert.equal(answered.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(artifactText(answered), /get_location returned: \{"city":"Paris"\}/);
  });

  await tt.step("tenant isolation: header, path prefix, body, card", async () => {
    const acme = { serviceParameters: { "X-Tenant-ID": "acme" } };
    const task = asTask(await client.sendMessage(request(message([text("acme only")])), acme));
    await assertSameAsNative(t, task, "acme");
    assert.equal((await t.fetch(`/v1/runs/${task.id}`)).status, 404, "not in the default tenant");

    await rejects(client.getTask({ tenant: "", id: task.id }), "TASK_NOT_FOUND", 404);
    await rejects(
      client.cancelTask({ tenant: "", id: task.id, metadata: undefined }),
      "TASK_NOT_FOUND",
      404,
    );
    await rejects(
      client.getTask({ tenant: "globex", id: task.id }),
      "TASK_NOT_FOUND",
      404,
    );
    // The spec's `/{tenant}` prefix, as the SDK sends it.
    const viaPath = await client.getTask({ tenant: "acme", id: task.id });
    assert.equal(viaPath.id, task.id);
    assert.equal((await client.getTask({ id: task.id, tenant: "" }, acme)).id, task.id);

    // A task sent with the tenant in the body and path lands in that tenant.
    const inBody = asTask(
      await client.sendMessage(request(message([text("in body")]), {}, { tenant: "acme" })),
    );
    await assertSameAsNative(t, inBody, "acme");

    // A card read with a tenant names it, and a client built from it stays in that tenant.
    const card = await (await t.fetch("/a2a/.well-known/agent-card.json", { tenant: "acme" }))
      .json();
    assert.equal(card.supportedInterfaces[0].tenant, "acme");
    const acmeClient = await new ClientFactory({ transports: [new RestTransportFactory()] })
      .createFromAgentCard(card);
    const own = await acmeClient.getTask({ tenant: "", id: task.id });
    assert.equal(own.id, task.id);

    const conflict = await t.fetch("/a2a/acme/message:send", {
      method: "POST",
      tenant: "globex",
      json: { message: { messageId: "x", role: "ROLE_USER", parts: [{ text: "x" }] } },
    });
    await errorBody(conflict, 400, "INVALID_PARAMS");
  });

  await tt.step("errors: unknown task, not-cancelable, unsupported operations", async () => {
    const res = await t.fetch("/a2a/tasks/no-such-task");
    const error = await errorBody(res, 404, "TASK_NOT_FOUND");
    assert.equal(error.status, "NOT_FOUND");
    const info = error.details[0];
    assert.equal(info.domain, "a2a-protocol.org");
    assert.equal(info.metadata.taskId, "no-such-task");
    await rejects(client.getTask({ tenant: "", id: "no-such-task" }), "TASK_NOT_FOUND", 404);

    const done = asTask(await client.sendMessage(request(message([text("finished")]))));
    const e = await rejects(
      client.cancelTask({ tenant: "", id: done.id, metadata: undefined }),
      "TASK_NOT_CANCELABLE",
      400,
    );
    assert.equal(e.name, "TaskNotCancelableError");
    const raw = await t.fetch(`/a2a/tasks/${done.id}:cancel`, { method: "POST" });
    await errorBody(raw, 400, "TASK_NOT_CANCELABLE");
    assert.equal((await nativeRun(t, done.id)).status, "completed", "unchanged");

    await rejects(
      client.sendMessage(request(message([text("more")], { taskId: done.id }))),
      "UNSUPPORTED_OPERATION",
      400,
    );
    await rejects(
      client.sendMessage(
        request(message([text("x")], { taskId: done.id, contextId: "another-context" })),
      ),
      "INVALID_PARAMS",
      400,
    );
    await rejects(
      client.sendMessage(request(message([text("x")], { taskId: "no-such-task" }))),
      "TASK_NOT_FOUND",
      404,
    );

    // Push notifications: the config endpoints and a config on send.
    for (
      const [method, path] of [
        ["POST", `/a2a/tasks/${done.id}/pushNotificationConfigs`],
        ["GET", `/a2a/tasks/${done.id}/pushNotificationConfigs`],
        ["GET", `/a2a/tasks/${done.id}/pushNotificationConfigs/c1`],
        ["DELETE", `/a2a/tasks/${done.id}/pushNotificationConfigs/c1`],
      ]
    ) {
      const r = await t.fetch(path, {
        method,
        ...(method === "POST" ? { json: { url: "https://example.com/hook" } } : {}),
      });
      await errorBody(r, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    }
    await rejects(
      client.sendMessage(
        request(message([text("notify me")]), {
          taskPushNotificationConfig: {
            tenant: "",
            id: "",
            taskId: "",
            url: "https://example.com/hook",
            token: "",
            authentication: undefined,
          },
        }),
      ),
      "PUSH_NOTIFICATION_NOT_SUPPORTED",
      400,
    );
    const extended = await t.fetch("/a2a/extendedAgentCard");
    await errorBody(extended, 400, "UNSUPPORTED_OPERATION");
  });

  await tt.step("errors: raw and URL parts, version, malformed", async () => {
    const raw: Part = {
      content: { $case: "raw", value: new TextEncoder().encode("bytes") as never },
      metadata: undefined,
      filename: "a.bin",
      mediaType: "application/octet-stream",
    };
    await rejects(
      client.sendMessage(request(message([text("see file"), raw]))),
      "CONTENT_TYPE_NOT_SUPPORTED",
      400,
    );
    const url: Part = {
      content: { $case: "url", value: "https://example.com/a.png" },
      metadata: undefined,
      filename: "",
      mediaType: "image/png",
    };
    await rejects(
      client.sendMessage(request(message([url]))),
      "CONTENT_TYPE_NOT_SUPPORTED",
      400,
    );
    const version = await t.fetch("/a2a/message:send", {
      method: "POST",
      headers: { "A2A-Version": "0.3" },
      json: { message: { messageId: "v", role: "ROLE_USER", parts: [{ text: "x" }] } },
    });
    await errorBody(version, 400, "VERSION_NOT_SUPPORTED");
    const missing = await t.fetch("/a2a/message:send", { method: "POST", json: {} });
    const malformed = await errorBody(missing, 400, "INVALID_PARAMS");
    assert.equal(malformed.status, "INVALID_ARGUMENT");
    const violations = malformed.details.find((d: { "@type": string }) =>
      d["@type"] === "type.googleapis.com/google.rpc.BadRequest"
    );
    assert.ok(violations.fieldViolations.some((v: { field: string }) => v.field === "message"));
    const notJson = await t.fetch("/a2a/message:send", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    await errorBody(notJson, 400, "INVALID_PARAMS");
    const agentRole = await t.fetch("/a2a/message:send", {
      method: "POST",
      json: { message: { messageId: "r", role: "ROLE_AGENT", parts: [{ text: "x" }] } },
    });
    await errorBody(agentRole, 400, "INVALID_PARAMS");
    const badContext = await t.fetch("/a2a/message:send", {
      method: "POST",
      json: {
        message: {
          messageId: "c",
          contextId: "has spaces",
          role: "ROLE_USER",
          parts: [{ text: "x" }],
        },
      },
    });
    await errorBody(badContext, 400, "INVALID_PARAMS");
    const unknown = await t.fetch("/a2a/nothing/here/at/all");
    const body = await unknown.json();
    assert.equal(unknown.status, 404);
    assert.equal(body.error.status, "NOT_FOUND");
    const wrongMethod = await t.fetch("/a2a/message:send");
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get("allow"), "POST");
    await wrongMethod.body?.cancel();
  });
}

/** The tasks that must still be working when we act on them, on the slow echo. */
async function slowSuite(tt: Deno.TestContext, store: StoreKind): Promise<void> {
  await using t = await startTestServer({ store, manifest: slowManifest });
  const client = await clientFor(t);

  await tt.step("returnImmediately answers a working task that then completes", async () => {
    const task = asTask(
      await client.sendMessage(
        request(message([text("one two three four five")]), { returnImmediately: true }),
      ),
    );
    assert.equal(task.status?.state, TaskState.TASK_STATE_WORKING);
    await assertSameAsNative(t, task);
    const done = await eventually(async () => {
      const read = await client.getTask({ tenant: "", id: task.id });
      return read.status?.state === TaskState.TASK_STATE_COMPLETED ? read : undefined;
    }, { timeout: 10_000, what: "completion" });
    assert.equal(artifactText(done), "one two three four five");
    await assertSameAsNative(t, done);
  });

  await tt.step("cancel a working task: canceled, here and natively", async () => {
    const task = asTask(
      await client.sendMessage(request(message([text(LONG_TEXT)]), { returnImmediately: true })),
    );
    const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    assert.equal(canceled.id, task.id);
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await assertSameAsNative(t, canceled);
    // Idempotent in effect: a second cancel finds it terminal.
    await rejects(
      client.cancelTask({ tenant: "", id: task.id, metadata: undefined }),
      "TASK_NOT_CANCELABLE",
      400,
    );
  });

  await tt.step("cancel with an empty body and no content type", async () => {
    const task = asTask(
      await client.sendMessage(request(message([text(LONG_TEXT)]), { returnImmediately: true })),
    );
    const res = await fetch(`${t.url}/a2a/tasks/${task.id}:cancel`, { method: "POST" });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, task.id);
    assert.equal(body.status.state, "TASK_STATE_CANCELED");
  });

  await tt.step("a stream the client drops does not lose the task", async () => {
    const controller = new AbortController();
    let taskId = "";
    let chunks = 0;
    for await (
      const event of client.sendMessageStream(request(message([text(LONG_TEXT)])), {
        signal: controller.signal,
      })
    ) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (event.payload?.$case === "artifactUpdate" && ++chunks === 2) break;
    }
    controller.abort();
    assert.ok(taskId);
    const working = await client.getTask({ tenant: "", id: taskId });
    assert.equal(working.status?.state, TaskState.TASK_STATE_WORKING);
    const done = await eventually(async () => {
      const read = await client.getTask({ tenant: "", id: taskId });
      return read.status?.state === TaskState.TASK_STATE_WORKING ? undefined : read;
    }, { timeout: 10_000, what: "the dropped stream's task to end" });
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(artifactText(done), LONG_TEXT);
    await assertSameAsNative(t, done);
  });

  await tt.step("subscribe to a working task: snapshot, then its updates", async () => {
    const task = asTask(
      await client.sendMessage(
        request(message([text("a b c d e f g h")]), { returnImmediately: true }),
      ),
    );
    const events: StreamResponse[] = [];
    for await (const event of client.resubscribeTask({ tenant: "", id: task.id })) {
      events.push(event);
    }
    assert.equal(events[0].payload?.$case, "task");
    const last = events.at(-1)!;
    assert.equal(
      last.payload?.$case === "statusUpdate" && last.payload.value.status?.state,
      TaskState.TASK_STATE_COMPLETED,
    );
    assert.ok(events.some((e) => e.payload?.$case === "artifactUpdate"));
    // A terminal task cannot be subscribed to.
    const res = await t.fetch(`/a2a/tasks/${task.id}:subscribe`, { method: "POST" });
    await errorBody(res, 400, "UNSUPPORTED_OPERATION");
  });
}

Deno.test("a2a: custom base path and public_url in the card", async () => {
  await using t = await startTestServer({
    manifest: {
      agent,
      http_server: {
        public_url: "https://agents.example.com/",
        protocol: { a2a: { path: "/agents/a2a" } },
      },
    },
  });
  const card = await (await t.fetch("/agents/a2a/.well-known/agent-card.json")).json();
  assert.equal(card.supportedInterfaces[0].url, "https://agents.example.com/agents/a2a");
  assert.deepEqual(card.skills.map((s: { tags: string[] }) => s.tags), [["chat"]]);
  const res = await t.fetch("/agents/a2a/message:send", {
    method: "POST",
    json: { message: { messageId: "p1", role: "ROLE_USER", parts: [{ text: "moved" }] } },
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.task.status.state, "TASK_STATE_COMPLETED");
  assert.equal((await t.fetch("/a2a/message:send", { method: "POST", json: {} })).status, 404);
});

Deno.test({
  name: "a2a: the root /.well-known/agent-card.json serves the card (base URL without slash)",
  async fn() {
    await using t = await startTestServer({ manifest: fastManifest });
    // Without the trailing slash the SDK resolves the card at the host's root.
    const client = await new ClientFactory({ transports: [new RestTransportFactory()] })
      .createFromUrl(`${t.url}/a2a`);
    const card = await client.getAgentCard();
    assert.equal(card.supportedInterfaces[0].url, `${t.url}/a2a`);
    const task = asTask(await client.sendMessage(request(message([text("from root")]))));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  },
});
