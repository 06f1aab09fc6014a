/**
 * Following a task (subscribe.ts), `SubscribeToTask`, through the official `@a2a-js/sdk` client: a
 * working task's snapshot and updates to its end, a subscriber that stays across the turns of an
 * input-required task, on one replica or another (Redis). Resuming from a cursor is
 * resume_test.ts.
 */
import assert from "node:assert/strict";
import { Role, type StreamResponse, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  dropSchema,
  startTestServer,
  storeKinds,
  testPostgresUrl,
  testRedisUrl,
  type TestServer,
  uniqueName,
} from "../../_kit/mod.ts";
import { bindingsManifest, LONG_TEXT, slowManifest } from "./agents.ts";
import {
  artifactText,
  asTask,
  clientFor,
  collect,
  message,
  overEachBinding,
  overHttpJson,
  payloadCase,
  rejects,
  request,
  restError,
  stateOf,
  stateOfEvent,
  text,
  transports,
} from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a subscribe (${store}): a working task over HTTP+JSON`, (tt) =>
    overHttpJson(tt, store, slowManifest, slowScenarios));
  Deno.test(`a2a subscribe (${store}): the same scenarios on both bindings`, (tt) =>
    overEachBinding(tt, store, bindingScenarios));
}

/** A task that must still be working when we subscribe, on the slow echo. */
async function slowScenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
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
    await restError(res, 400, "UNSUPPORTED_OPERATION");
  });
}

/** The same subscriptions over each transport: every answer must be the same. */
async function bindingScenarios(
  tt: Deno.TestContext,
  t: TestServer,
  client: Client,
): Promise<void> {
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
}

Deno.test("a2a: a task that asks again and again, followed by one subscriber to its end", async () => {
  // One model step per run: a tool call uses it up, so each turn ends input-required.
  await using t = await startTestServer({
    manifest: { ...bindingsManifest, agent: { ...bindingsManifest.agent, max_steps: 1 } },
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
Deno.test({
  name: "a2a: a subscriber on one replica follows the turns another replica runs (Redis)",
  ignore: !(testPostgresUrl && testRedisUrl),
}, async () => {
  const schema = uniqueName("agentd_a2a_replicas");
  // Declared first, disposed last: the schema goes once both replicas have closed.
  await using _drop = { [Symbol.asyncDispose]: () => dropSchema(schema) };
  const shared = {
    ...bindingsManifest,
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
