/**
 * The A2A add-on through the official `@a2a-js/sdk` 1.3.0 client over BOTH of its transports,
 * JSON-RPC and REST (HTTP+JSON), running the same scenarios on each, on SQLite and PostgreSQL:
 * the two bindings are one set of operations, so every answer must be the same. Each task is
 * checked against the native `/v1` record too.
 */
import assert from "node:assert/strict";
import {
  type ListTasksRequest,
  type Message,
  type Part,
  Role,
  type StreamResponse,
  TaskState,
} from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  dropSchema,
  eventually,
  readSse,
  startTestServer,
  type StoreKind,
  storeKinds,
  testPostgresUrl,
  testRedisUrl,
  type TestServer,
  uniqueName,
} from "../../_kit/mod.ts";
import {
  artifactText,
  asTask,
  clientFor,
  collect,
  data,
  factoryFor,
  message,
  NATIVE,
  nativeRun,
  payloadCase,
  rejects,
  request,
  restError,
  rpc,
  rpcError,
  stateOf,
  stateOfEvent,
  text,
  type Transport,
  transports,
  withHeaders,
} from "./sdk.ts";

const fixtures = new URL("./fixtures/tools.ts", import.meta.url).pathname;

const REQUIRED_EXT = "https://example.com/ext/signed/v1";
const OPTIONAL_EXT = "https://example.com/ext/citations/v1";

/** Echo with tools, slow enough (per word) that a long text keeps its task working a while. */
const manifest = {
  agent: {
    name: "a2a-bindings",
    description: "An echo agent for the A2A binding tests",
    version: "2.0.0",
    model: { provider: "echo", inference_params: { provider_params: { delay_ms: 20 } } },
  },
  tool: {
    pay: {
      kind: "javascript",
      module: fixtures,
      function: "pay",
      description: "Pays an amount",
      requires_approval: true,
    },
    bump: { kind: "javascript", module: fixtures, function: "bump", description: "Counts" },
  },
  http_server: {
    protocol: { a2a: { extension: { [OPTIONAL_EXT]: { description: "Citations" } } } },
  },
};

/** 25 words: about half a second of echo, ample to see the task working first. */
const MEDIUM_TEXT = Array.from({ length: 25 }, (_, i) => `w${i}`).join(" ");

/** 250 words: about five seconds of echo, far longer than any step that acts on the task. */
const LONG_TEXT = Array.from({ length: 250 }, (_, i) => `word${i}`).join(" ");

async function assertSameAsNative(
  t: TestServer,
  task: { id: string; contextId: string; status?: { state: TaskState } },
  tenant?: string,
) {
  const run = await nativeRun(t, task.id, tenant);
  assert.equal(run.session_id, task.contextId);
  assert.equal(run.status, NATIVE[task.status!.state], `task ${task.id}`);
}

for (const store of storeKinds) {
  for (const transport of transports) {
    Deno.test(`a2a over ${transport} (${store}): the same scenarios on each binding`, (tt) =>
      scenarios(tt, store, transport));
  }
}

async function scenarios(tt: Deno.TestContext, store: StoreKind, transport: Transport) {
  await using t = await startTestServer({ store, manifest });
  const client = await clientFor(t, transport);

  await tt.step(
    "the card names both bindings at the base URL; the client picks its own",
    async () => {
      const card = await client.getAgentCard();
      assert.deepEqual(
        card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
        [[`${t.url}/a2a`, "JSONRPC", "1.0"], [`${t.url}/a2a`, "HTTP+JSON", "1.0"]],
      );
      assert.equal(client.protocolVersion, "1.0");
      assert.deepEqual(card.capabilities?.extensions.map((e) => [e.uri, e.required]), [
        [OPTIONAL_EXT, false],
      ]);
    },
  );

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

  await tt.step("get with history: historyLength honoured", async () => {
    const sent = asTask(await client.sendMessage(request(message([text("remember this")]))));
    const full = await client.getTask({ tenant: "", id: sent.id });
    assert.equal(full.history.length, 2);
    const last = await client.getTask({ tenant: "", id: sent.id, historyLength: 1 });
    assert.deepEqual(last.history.map((m) => m.role), [Role.ROLE_AGENT]);
    const none = await client.getTask({ tenant: "", id: sent.id, historyLength: 0 });
    assert.equal(none.history.length, 0);
    await rejects(client.getTask({ tenant: "", id: "no-such-task" }), "TASK_NOT_FOUND");
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

  await tt.step("cancel a working task: canceled, here and natively", async () => {
    const task = asTask(
      await client.sendMessage(request(message([text(LONG_TEXT)]), { returnImmediately: true })),
    );
    const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    await assertSameAsNative(t, canceled);
    await rejects(
      client.cancelTask({ tenant: "", id: task.id, metadata: undefined }),
      "TASK_NOT_CANCELABLE",
    );
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

  await tt.step("subscribe to a working task: snapshot, its updates, to its end", async () => {
    const task = asTask(
      await client.sendMessage(request(message([text(LONG_TEXT)]), { returnImmediately: true })),
    );
    const subscription = client.resubscribeTask({ tenant: "", id: task.id })[
      Symbol.asyncIterator
    ]();
    const snapshot = (await subscription.next()).value as StreamResponse;
    assert.equal(stateOfEvent(snapshot), TaskState.TASK_STATE_WORKING);
    // Live updates flow (a WORKING status may come first); the task's end (cancelled) ends it.
    for (;;) {
      const next = (await subscription.next()).value as StreamResponse;
      if (payloadCase(next) === "artifactUpdate") break;
      assert.equal(stateOfEvent(next), TaskState.TASK_STATE_WORKING);
    }
    await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    const rest = await collect({ [Symbol.asyncIterator]: () => subscription });
    assert.equal(stateOfEvent(rest.at(-1)!), TaskState.TASK_STATE_CANCELED);
  });

  await tt.step("multi-turn: the answer continues the task; a subscriber sees it end", async () => {
    const first = message([text('/call pay {"amount": 5}')]);
    const waiting = asTask(await client.sendMessage(request(first)));
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    // A subscriber to the input-required task stays on it across the next turn.
    const subscription = client.resubscribeTask({ tenant: "", id: waiting.id })[
      Symbol.asyncIterator
    ]();
    const snapshot = await subscription.next();
    assert.equal(
      stateOfEvent(snapshot.value as StreamResponse),
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );
    const rest = collect({ [Symbol.asyncIterator]: () => subscription });

    const answer = message([text("yes")], { taskId: waiting.id });
    const done = asTask(await client.sendMessage(request(answer)));
    assert.equal(done.id, waiting.id, "the same task");
    assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.match(artifactText(done), /pay returned: \{"paid":5\}/);
    // History holds every turn: the request, the question, the answer (as sent), the reply.
    assert.deepEqual(done.history.map((m) => [m.messageId, m.role]), [
      [first.messageId, Role.ROLE_USER],
      [`${waiting.id}:status`, Role.ROLE_AGENT],
      [answer.messageId, Role.ROLE_USER],
      [done.history.at(-1)!.messageId, Role.ROLE_AGENT],
    ]);
    assert.ok(done.history.every((m) => m.taskId === waiting.id));

    const events = await rest;
    assert.deepEqual(events.map(stateOfEvent).filter((s) => s !== undefined), [
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_COMPLETED,
    ]);
    assert.ok(events.some((e) => payloadCase(e) === "artifactUpdate"));
    // A terminal task takes no more messages and no subscriber.
    await rejects(
      client.sendMessage(request(message([text("more")], { taskId: waiting.id }))),
      "UNSUPPORTED_OPERATION",
    );
    await rejects(
      collect(client.resubscribeTask({ tenant: "", id: waiting.id })),
      "UNSUPPORTED_OPERATION",
    );
    // Natively the turns are two runs of the session; the second is no task of its own.
    const runs = (await (await t.fetch(`/v1/sessions/${done.contextId}/runs`)).json()).items;
    assert.deepEqual(runs.map((r: { status: string }) => r.status), ["interrupted", "completed"]);
    await rejects(client.getTask({ tenant: "", id: runs[1].run_id }), "TASK_NOT_FOUND");
  });

  await tt.step("cancel an input-required task: canceled, and it takes no answer", async () => {
    const waiting = asTask(await client.sendMessage(request(message([text("/call pay {}")]))));
    assert.equal(waiting.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const canceled = await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const read = await client.getTask({ tenant: "", id: waiting.id });
    assert.equal(read.status?.state, TaskState.TASK_STATE_CANCELED);
    await rejects(
      client.sendMessage(request(message([text("yes")], { taskId: waiting.id }))),
      "UNSUPPORTED_OPERATION",
    );
    await rejects(
      client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined }),
      "TASK_NOT_CANCELABLE",
    );
    // Natively: the first run keeps its status; a cancelled run records the end.
    assert.equal((await nativeRun(t, waiting.id)).status, "interrupted");
    const runs = (await (await t.fetch(`/v1/sessions/${waiting.contextId}/runs`)).json()).items;
    assert.deepEqual(runs.map((r: { status: string }) => r.status), ["interrupted", "cancelled"]);
    // The context goes on: a new task in it closes the unanswered call.
    const next = asTask(
      await client.sendMessage(request(message([text("next")], { contextId: waiting.contextId }))),
    );
    assert.equal(next.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  await tt.step("list: each filter, paging, history and artifacts, tenant-scoped", async () => {
    // A tenant of its own, through a client built from a card that names it.
    const tenant = `list-${transport === "JSONRPC" ? "rpc" : "rest"}-${
      crypto.randomUUID().slice(0, 6)
    }`;
    const card = await (await t.fetch("/a2a/.well-known/agent-card.json", { tenant })).json();
    const lister = await factoryFor(transport).createFromAgentCard(card);
    const send = async (parts: Part[], extra: Partial<Message> = {}, config = {}) => {
      const task = asTask(await lister.sendMessage(request(message(parts, extra), config)));
      t.clock.advance(5);
      return task;
    };
    const t1 = await send([text("one")]);
    const t2 = await send([text("two")], { contextId: t1.contextId });
    const t3 = await send([text("/call pay {}")]);
    const native = await t.fetch("/v1/runs", {
      method: "POST",
      tenant,
      json: { messages: [{ role: "user", content: [{ type: "text", value: "native" }] }] },
    });
    const nativeId = (await readSse(native).until("run_finished")).data;
    const nativeRunId = JSON.parse(nativeId).run_id as string;
    t.clock.advance(5);
    const t4 = await send([text(LONG_TEXT)], {}, { returnImmediately: true });

    const list = (params: Partial<ListTasksRequest> = {}) =>
      lister.listTasks({
        tenant: "",
        contextId: "",
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken: "",
        statusTimestampAfter: undefined,
        ...params,
      });
    const ids = (page: { tasks: { id: string }[] }) => page.tasks.map((x) => x.id);

    assert.deepEqual(ids(await list({ status: TaskState.TASK_STATE_WORKING })), [t4.id]);
    await lister.cancelTask({ tenant: "", id: t4.id, metadata: undefined });
    const all = await list();
    assert.deepEqual(ids(all), [t4.id, nativeRunId, t3.id, t2.id, t1.id], "newest first");
    assert.equal(all.totalSize, 5);
    assert.equal(all.nextPageToken, "");
    assert.equal(all.pageSize, 50, "the default page size");
    assert.deepEqual(ids(await list({ contextId: t1.contextId })), [t2.id, t1.id]);
    assert.deepEqual(ids(await list({ status: TaskState.TASK_STATE_COMPLETED })), [
      nativeRunId,
      t2.id,
      t1.id,
    ]);
    assert.deepEqual(ids(await list({ status: TaskState.TASK_STATE_INPUT_REQUIRED })), [t3.id]);
    assert.deepEqual(ids(await list({ status: TaskState.TASK_STATE_CANCELED })), [t4.id]);
    assert.deepEqual(ids(await list({ status: TaskState.TASK_STATE_SUBMITTED })), []);
    const since = (await lister.getTask({ tenant: "", id: t3.id })).status!.timestamp!;
    assert.deepEqual(ids(await list({ statusTimestampAfter: since })), [t4.id, nativeRunId, t3.id]);

    // Pages of two, following the token.
    const p1 = await list({ pageSize: 2 });
    assert.deepEqual(ids(p1), [t4.id, nativeRunId]);
    assert.equal(p1.totalSize, 5);
    assert.equal(p1.pageSize, 2);
    assert.notEqual(p1.nextPageToken, "");
    const p2 = await list({ pageSize: 2, pageToken: p1.nextPageToken });
    assert.deepEqual(ids(p2), [t3.id, t2.id]);
    const p3 = await list({ pageSize: 2, pageToken: p2.nextPageToken });
    assert.deepEqual(ids(p3), [t1.id]);
    assert.equal(p3.nextPageToken, "");
    await rejects(list({ pageToken: "not-a-token" }), "INVALID_PARAMS");
    await rejects(list({ pageSize: 101 }), "INVALID_PARAMS");

    // No history nor artifacts unless asked for.
    const bare = await list({ contextId: t1.contextId });
    assert.ok(bare.tasks.every((x) => x.history.length === 0 && x.artifacts.length === 0));
    const rich = await list({ contextId: t1.contextId, historyLength: 1, includeArtifacts: true });
    assert.deepEqual(rich.tasks.map((x) => x.history.map((m) => m.role)), [
      [Role.ROLE_AGENT],
      [Role.ROLE_AGENT],
    ]);
    assert.deepEqual(rich.tasks.map(artifactText), ["two", "one"]);

    // A task answered after listing counts once, in its new state.
    await lister.sendMessage(request(message([text("yes")], { taskId: t3.id })));
    const after = await list({ status: TaskState.TASK_STATE_COMPLETED });
    assert.deepEqual(ids(after), [t3.id, nativeRunId, t2.id, t1.id]);
    assert.equal((await list()).totalSize, 5);
    // The default tenant sees none of these.
    assert.ok(
      !ids(
        await client.listTasks({
          tenant: "",
          contextId: "",
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageToken: "",
          statusTimestampAfter: undefined,
        }),
      ).includes(t1.id),
    );
  });

  await tt.step(
    "tenants: header, params/path, card; another tenant's task is unknown",
    async () => {
      const acme = withHeaders({ "X-Tenant-ID": "acme" });
      const task = asTask(await client.sendMessage(request(message([text("acme only")])), acme));
      await assertSameAsNative(t, task, "acme");
      await rejects(client.getTask({ tenant: "", id: task.id }), "TASK_NOT_FOUND");
      await rejects(client.getTask({ tenant: "globex", id: task.id }), "TASK_NOT_FOUND");
      assert.equal((await client.getTask({ tenant: "acme", id: task.id })).id, task.id);
      const inRequest = asTask(
        await client.sendMessage(request(message([text("in request")]), {}, { tenant: "acme" })),
      );
      await assertSameAsNative(t, inRequest, "acme");
      // A card read with a tenant names it; a client built from it stays in that tenant.
      const card = await (await t.fetch("/a2a/.well-known/agent-card.json", { tenant: "acme" }))
        .json();
      assert.deepEqual(card.supportedInterfaces.map((i: { tenant: string }) => i.tenant), [
        "acme",
        "acme",
      ]);
      const acmeClient = await factoryFor(transport).createFromAgentCard(card);
      assert.equal((await acmeClient.getTask({ tenant: "", id: task.id })).id, task.id);
      await rejects(
        client.getTask({ tenant: "acme", id: task.id }, withHeaders({ "X-Tenant-ID": "globex" })),
        "INVALID_PARAMS",
      );
    },
  );

  await tt.step("not supported: push configs, extended card, raw and URL parts", async () => {
    // The SDK refuses push calls itself (the card says pushNotifications: false): ask raw.
    if (transport === "JSONRPC") {
      for (
        const method of ["CreateTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"]
      ) {
        await rpcError(
          await rpc(t, { jsonrpc: "2.0", id: 7, method, params: { taskId: "t" } }),
          -32003,
        );
      }
      await rpcError(
        await rpc(t, { jsonrpc: "2.0", id: 8, method: "GetExtendedAgentCard" }),
        -32004,
      );
    } else {
      await restError(
        await t.fetch("/a2a/tasks/t/pushNotificationConfigs", { method: "GET" }),
        400,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
      );
      await restError(await t.fetch("/a2a/extendedAgentCard"), 400, "UNSUPPORTED_OPERATION");
    }
    const url = {
      content: { $case: "url" as const, value: "https://example.com/a.png" },
      metadata: undefined,
      filename: "",
      mediaType: "image/png",
    };
    await rejects(client.sendMessage(request(message([url]))), "CONTENT_TYPE_NOT_SUPPORTED");
  });
}

Deno.test("a2a: a required extension a client does not activate is refused, on both bindings", async () => {
  await using t = await startTestServer({
    manifest: {
      ...manifest,
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
    assert.deepEqual(card.capabilities?.extensions.map((e) => [e.uri, e.required, e.params]), [
      [REQUIRED_EXT, true, { alg: "ES256" }],
    ]);
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

Deno.test("a2a: the card is cacheable (Cache-Control, ETag, Last-Modified, 304)", async () => {
  await using t = await startTestServer({ manifest });
  for (const path of ["/a2a/.well-known/agent-card.json", "/.well-known/agent-card.json"]) {
    const first = await t.fetch(path);
    assert.equal(first.status, 200);
    const body = await first.text();
    const etag = first.headers.get("etag")!;
    const modified = first.headers.get("last-modified")!;
    assert.match(first.headers.get("cache-control") ?? "", /max-age=\d+/);
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    assert.ok(Date.parse(modified) <= Date.now());
    const again = await t.fetch(path, { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);
    const weak = await t.fetch(path, { headers: { "If-None-Match": `"other", W/${etag}` } });
    assert.equal(weak.status, 304);
    await weak.body?.cancel();
    const changed = await t.fetch(path, { headers: { "If-None-Match": '"stale"' } });
    assert.equal(changed.status, 200);
    assert.equal(await changed.text(), body);
    const since = await t.fetch(path, { headers: { "If-Modified-Since": modified } });
    assert.equal(since.status, 304);
    await since.body?.cancel();
    // Another tenant's card is another document.
    const acme = await t.fetch(path, { tenant: "acme", headers: { "If-None-Match": etag } });
    assert.equal(acme.status, 200);
    assert.notEqual(acme.headers.get("etag"), etag);
    assert.match(acme.headers.get("vary") ?? "", /X-Tenant-ID/i);
    await acme.body?.cancel();
  }
});

Deno.test("a2a: a task that asks again and again, followed by one subscriber to its end", async () => {
  // One model step per run: a tool call uses it up, so each turn ends input-required.
  await using t = await startTestServer({
    manifest: { ...manifest, agent: { ...manifest.agent, max_steps: 1 } },
  });
  for (const transport of transports) {
    const client = await clientFor(t, transport);
    const first = asTask(await client.sendMessage(request(message([text("/call bump {}")]))));
    assert.equal(first.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(first.status?.message?.messageId, `${first.id}:status`);
    const subscription = client.resubscribeTask({ tenant: "", id: first.id })[
      Symbol.asyncIterator
    ]();
    assert.equal(payloadCase((await subscription.next()).value as StreamResponse), "task");
    const followed = collect({ [Symbol.asyncIterator]: () => subscription });

    // Turn two is streamed: the same task, input-required again.
    const second = await collect(
      client.sendMessageStream(
        request(message([text('/call bump {"by": 2}')], { taskId: first.id })),
      ),
    );
    assert.ok(second.every((e) => {
      const p = e.payload?.value as { id?: string; taskId?: string };
      return (p.id ?? p.taskId) === first.id;
    }));
    assert.equal(stateOfEvent(second.at(-1)!), TaskState.TASK_STATE_INPUT_REQUIRED);
    const third = asTask(
      await client.sendMessage(request(message([text("that will do")], { taskId: first.id }))),
    );
    assert.equal(third.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(stateOf(third), { count: 3 }, "every turn's tool ran in the one context");

    const states = (await followed).map(stateOfEvent).filter((s) => s !== undefined);
    assert.deepEqual(states, [
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_COMPLETED,
    ]);
    const users = third.history.filter((m) => m.role === Role.ROLE_USER);
    assert.deepEqual(users.map((m) => m.parts[0].content?.value), [
      "/call bump {}",
      '/call bump {"by": 2}',
      "that will do",
    ]);
  }
});

Deno.test("a2a: list answers omit history and artifacts unless asked, on the wire", async () => {
  await using t = await startTestServer({ manifest });
  const sent = await (await rpc(t, {
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: { message: { messageId: "w1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
  })).json();
  const contextId = sent.result.task.contextId;
  const rest = await (await t.fetch(`/a2a/tasks?contextId=${contextId}`)).json();
  const rpcList = (await (await rpc(t, {
    jsonrpc: "2.0",
    id: 2,
    method: "ListTasks",
    params: { contextId },
  })).json()).result;
  for (const body of [rest, rpcList]) {
    assert.deepEqual(Object.keys(body).sort(), ["nextPageToken", "pageSize", "tasks", "totalSize"]);
    assert.equal(body.nextPageToken, "");
    assert.deepEqual(Object.keys(body.tasks[0]).sort(), ["contextId", "id", "status"]);
  }
  const full = await (await t.fetch(
    `/a2a/tasks?contextId=${contextId}&includeArtifacts=true&historyLength=5`,
  )).json();
  assert.equal(full.tasks[0].artifacts[0].parts[0].text, "hi");
  assert.equal(full.tasks[0].history.length, 2);
  for (const query of ["pageSize=0", "pageSize=abc", "includeArtifacts=maybe", "status=RUNNING"]) {
    await restError(await t.fetch(`/a2a/tasks?${query}`), 400, "INVALID_PARAMS");
  }
  await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 3, method: "ListTasks", params: { pageSize: 0 } }),
    -32602,
  );
});

Deno.test({
  name: "a2a: a subscriber on one replica follows the turns another replica runs (Redis)",
  ignore: !(testPostgresUrl && testRedisUrl),
}, async () => {
  const schema = uniqueName("agentd_a2a_replicas");
  // Declared first, disposed last: the schema goes once both replicas have closed.
  await using _drop = { [Symbol.asyncDispose]: () => dropSchema(schema) };
  const shared = {
    ...manifest,
    runtime: { pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") } },
  };
  await using a = await startTestServer({
    store: "postgres",
    manifest: shared,
    shared: { schema },
  });
  await using b = await startTestServer({
    store: "postgres",
    manifest: shared,
    shared: { schema },
  });
  const onA = await clientFor(a, "HTTP+JSON");
  const onB = await clientFor(b, "JSONRPC");
  const waiting = asTask(await onA.sendMessage(request(message([text("/call pay {}")]))));
  const subscription = onB.resubscribeTask({ tenant: "", id: waiting.id })[Symbol.asyncIterator]();
  assert.equal(
    stateOfEvent((await subscription.next()).value as StreamResponse),
    TaskState.TASK_STATE_INPUT_REQUIRED,
  );
  const rest = collect({ [Symbol.asyncIterator]: () => subscription });
  const done = asTask(
    await onA.sendMessage(request(message([text("yes")], { taskId: waiting.id }))),
  );
  assert.equal(done.status?.state, TaskState.TASK_STATE_COMPLETED);
  const states = (await rest).map(stateOfEvent).filter((s) => s !== undefined);
  assert.deepEqual(states, [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  assert.equal(
    (await onB.getTask({ tenant: "", id: waiting.id })).status?.state,
    done.status?.state,
  );
});
