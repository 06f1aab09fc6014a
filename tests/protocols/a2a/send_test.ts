/**
 * Sending messages (send.ts), `SendMessage` and `SendStreamingMessage`, through the official
 * `@a2a-js/sdk` client (and raw HTTP where the wire is the subject): a new task, a task in a
 * context, data parts, output modes, extensions, the message that answers an input-required task;
 * the same scenarios on both bindings. Every task is checked against the native `/v1` record too.
 */
import assert from "node:assert/strict";
import { type Part, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  eventually,
  parseSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";
import {
  bindingsManifest,
  fastManifest,
  LONG_TEXT,
  MEDIUM_TEXT,
  OPTIONAL_EXT,
  REQUIRED_EXT,
  SLOW_TEXT,
  slowManifest,
} from "./agents.ts";
import {
  artifactText,
  assertSameAsNative,
  asTask,
  clientFor,
  collect,
  data,
  message,
  nativeRun,
  overEachBinding,
  overHttpJson,
  payloadCase,
  rejects,
  request,
  stateOf,
  text,
  transports,
  withHeaders,
} from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a send (${store}): send, stream, data, output modes, answers`, (tt) =>
    overHttpJson(tt, store, fastManifest, restScenarios));
  Deno.test(`a2a send (${store}): return immediately, a dropped stream`, (tt) =>
    overHttpJson(tt, store, slowManifest, slowScenarios));
  Deno.test(`a2a send (${store}): the same scenarios on both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** Sends over HTTP+JSON, on the fast echo. */
async function restScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
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
}

/** The sends whose task must still be working when we act on it, on the slow echo. */
async function slowScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
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

  await tt.step("a stream the client drops does not lose the task", async () => {
    const controller = new AbortController();
    let taskId = "";
    let chunks = 0;
    for await (
      const event of client.sendMessageStream(request(message([text(SLOW_TEXT)])), {
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
    assert.equal(artifactText(done), SLOW_TEXT);
    await assertSameAsNative(t, done);
  });
}

/** The same sends over each transport: every answer must be the same. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
): Promise<void> {
  await tt.step("send (blocking): the completed task, same as the native run", async () => {
    const msg = message([text("hello there")]);
    const task = asTask(await client.sendMessage(request(msg)));
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(artifactText(task), "hello there");
    assert.deepEqual(task.history.map((m) => m.role), [Role.ROLE_USER, Role.ROLE_AGENT]);
    assert.equal(task.history[0].messageId, msg.messageId, "the messageId is kept as sent");
    await assertSameAsNative(t, task);
  });

  await tt.step("send (non-blocking): a working task that then completes", async () => {
    const task = asTask(
      await client.sendMessage(
        request(message([text(MEDIUM_TEXT)]), { returnImmediately: true }),
      ),
    );
    assert.equal(task.status?.state, TaskState.TASK_STATE_WORKING);
    const done = await eventually(async () => {
      const read = await client.getTask({ tenant: "", id: task.id });
      return read.status?.state === TaskState.TASK_STATE_COMPLETED && read;
    }, { what: "the task to complete" });
    assert.equal(artifactText(done), MEDIUM_TEXT);
    await assertSameAsNative(t, done);
  });

  await tt.step("stream: task, working, text chunks, state artifact, completed", async () => {
    const events = await collect(
      client.sendMessageStream(request(message([text("stream me"), data({ streamed: true })]))),
    );
    assert.deepEqual(events.map(payloadCase), [
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate",
    ]);
    const first = events[0].payload!.value as { id: string; status?: { state: TaskState } };
    assert.equal(first.status?.state, TaskState.TASK_STATE_SUBMITTED);
    const last = events.at(-1)!.payload!.value as { status?: { state: TaskState } };
    assert.equal(last.status?.state, TaskState.TASK_STATE_COMPLETED);
    const read = await client.getTask({ tenant: "", id: first.id });
    assert.equal(artifactText(read), 'stream me{"streamed":true}');
    assert.deepEqual(stateOf(read), { streamed: true });
  });

  await tt.step(
    "data parts of every JSON type: kept on the message, objects in the context",
    async () => {
      const values = [{ city: "Paris" }, [1, 2], "a string", 42, true, null];
      const msg = message([text("typed"), ...values.map(data)]);
      const task = asTask(await client.sendMessage(request(msg)));
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      const native =
        await (await t.fetch(`/v1/sessions/${task.contextId}/messages/${msg.messageId}`))
          .json();
      assert.deepEqual(native.content, [
        { type: "text", value: "typed" },
        ...values.map((value) => ({ type: "data", value })),
      ]);
      // Only the object has keys to merge into the context.
      assert.deepEqual(stateOf(task), { city: "Paris" });
      const sent = task.history[0].parts.map((p) => p.content?.value);
      // (The SDK decodes a data part holding null as a part without content.)
      assert.deepEqual(sent, ["typed", { city: "Paris" }, [1, 2], "a string", 42, true, undefined]);
    },
  );

  await tt.step(
    "extensions: unknown ones ignored, declared ones activated and echoed",
    async () => {
      const unknown = asTask(
        await client.sendMessage(
          request(message([text("ext")], { extensions: ["https://example.com/ext/unknown/v9"] })),
          withHeaders({ "A2A-Extensions": "https://example.com/ext/other/v1" }),
        ),
      );
      assert.equal(unknown.status?.state, TaskState.TASK_STATE_COMPLETED);
      const res = await t.fetch("/a2a/message:send", {
        method: "POST",
        headers: { "A2A-Extensions": `${OPTIONAL_EXT}, https://example.com/ext/other/v1` },
        json: {
          message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }] },
        },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("a2a-extensions"), OPTIONAL_EXT);
      await res.body?.cancel();
    },
  );

  await tt.step("a duplicate messageId in a context is refused, not renamed", async () => {
    const msg = message([text("once")]);
    const first = asTask(await client.sendMessage(request(msg)));
    const again = { ...msg, contextId: first.contextId };
    const e = await rejects(client.sendMessage(request(again)), "INVALID_PARAMS");
    assert.match(e.message, /already sent/);
  });

  await tt.step("a busy context: UnsupportedOperationError naming it", async () => {
    const working = asTask(
      await client.sendMessage(request(message([text(LONG_TEXT)]), { returnImmediately: true })),
    );
    const e = await rejects(
      client.sendMessage(request(message([text("me too")], { contextId: working.contextId }))),
      "UNSUPPORTED_OPERATION",
    );
    assert.match(e.message, /working task/);
    await client.cancelTask({ tenant: "", id: working.id, metadata: undefined });
  });
}

Deno.test("a2a: a required extension a client does not activate is refused, on both bindings", async () => {
  await using t = await startTestServer({
    manifest: {
      ...bindingsManifest,
      http_server: {
        protocol: {
          a2a: { extension: { [REQUIRED_EXT]: { required: true, params: { alg: "ES256" } } } },
        },
      },
    },
  });
  for (const transport of transports) {
    const client: Client = await clientFor(t, transport);
    const card = await client.getAgentCard();
    // The manifest's, then agentd's own two.
    assert.deepEqual(
      card.capabilities?.extensions.map((e) => [e.uri, e.required, e.params]).slice(0, 1),
      [[REQUIRED_EXT, true, { alg: "ES256" }]],
    );
    assert.equal(card.capabilities?.extensions.length, 3);
    await rejects(
      client.sendMessage(request(message([text("unsigned")]))),
      "EXTENSION_SUPPORT_REQUIRED",
    );
    await rejects(
      collect(client.sendMessageStream(request(message([text("unsigned")])))),
      "EXTENSION_SUPPORT_REQUIRED",
    );
    const ok = asTask(
      await client.sendMessage(
        request(message([text("signed")])),
        withHeaders({ "A2A-Extensions": REQUIRED_EXT }),
      ),
    );
    assert.equal(ok.status?.state, TaskState.TASK_STATE_COMPLETED);
    // Named on the message instead of the header works too.
    const inMessage = asTask(
      await client.sendMessage(request(message([text("signed")], { extensions: [REQUIRED_EXT] }))),
    );
    assert.equal(inMessage.status?.state, TaskState.TASK_STATE_COMPLETED);
  }
});
