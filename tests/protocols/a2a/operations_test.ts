/**
 * Reading, listing and cancelling tasks (operations.ts), `GetTask`, `ListTasks` and `CancelTask`,
 * through the official `@a2a-js/sdk` client and raw HTTP: history lengths, a native run read as a
 * task, every list filter and page, cancelling a working and an input-required task; the same
 * scenarios on both bindings.
 */
import assert from "node:assert/strict";
import { type ListTasksRequest, type Message, type Part, Role, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  eventually,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";
import { bindingsManifest, fastManifest, LONG_TEXT, SLOW_TEXT, slowManifest } from "./agents.ts";
import {
  artifactText,
  assertSameAsNative,
  asTask,
  factoryFor,
  message,
  nativeRun,
  overEachBinding,
  overHttpJson,
  rejects,
  request,
  restError,
  rpc,
  rpcError,
  text,
  type Transport,
} from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a operations (${store}): get with history, a native run as a task`, (tt) =>
    overHttpJson(tt, store, fastManifest, restScenarios));
  Deno.test(`a2a operations (${store}): cancel a working task`, (tt) =>
    overHttpJson(tt, store, slowManifest, slowScenarios));
  Deno.test(`a2a operations (${store}): the same scenarios on both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** Reads over HTTP+JSON, on the fast echo. */
async function restScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
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
    await restError(res, 400, "INVALID_PARAMS");
    const trimmed = asTask(
      await client.sendMessage(request(message([text("short")]), { historyLength: 0 })),
    );
    assert.equal(trimmed.history.length, 0, "configuration.historyLength on send");
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
}

/** Cancels of tasks that must still be working, on the slow echo. */
async function slowScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
  await tt.step("cancel a working task: canceled, here and natively", async () => {
    const task = asTask(
      await client.sendMessage(request(message([text(SLOW_TEXT)]), { returnImmediately: true })),
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
      await client.sendMessage(request(message([text(SLOW_TEXT)]), { returnImmediately: true })),
    );
    const res = await fetch(`${t.url}/a2a/tasks/${task.id}:cancel`, { method: "POST" });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, task.id);
    assert.equal(body.status.state, "TASK_STATE_CANCELED");
  });
}

/** The same reads and cancels over each transport: every answer must be the same. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
  transport: Transport,
): Promise<void> {
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
}

Deno.test("a2a: list answers omit history and artifacts unless asked, on the wire", async () => {
  await using t = await startTestServer({ manifest: bindingsManifest });
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
