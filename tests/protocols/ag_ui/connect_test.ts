/**
 * Front ends that reload: `POST /ag-ui/connect` (the thread back, the run in progress re-joined,
 * from the client's cursor), `forwardedProps.on_disconnect`, and CopilotKit's resume (the
 * interrupted run's `runId` again, with `resume` entries), through the official client where it
 * can say it and plain fetch where it cannot (a dropped stream).
 */
import assert from "node:assert/strict";
import {
  type BaseEvent,
  HttpAgent,
  type RunAgentInput,
  runHttpRequest,
  transformHttpEventStream,
} from "@ag-ui/client";
import {
  eventually,
  parseSse,
  readSse,
  startTestServer,
  testRedisUrl,
  type TestServer,
  uniqueName,
} from "../../_kit/mod.ts";
import { PACED, randomCut, WORDS } from "../../runs/long_run.ts";
import { APPROVAL_TOOL, checkStream, RecordingFetch } from "./helpers.ts";

const manifest = {
  agent: { name: "ag-ui-connect", model: { provider: "echo" } },
  tool: {
    delete_file: APPROVAL_TOOL,
  },
  http_server: { protocol: { ag_ui: {} } },
};

/**
 * A plain `@ag-ui/client` app's agent after a reload: `connect()` posts the thread to
 * `/ag-ui/connect` (with the cursor it kept, if any), as docs/ag-ui.md shows.
 */
class ResumableAgent extends HttpAgent {
  lastEventId?: string;

  protected override connect(input: RunAgentInput) {
    const headers: Record<string, string> = {
      ...this.headers,
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (this.lastEventId) headers["last-event-id"] = this.lastEventId;
    const url = this.url.replace(/\/run$/, "/connect");
    return transformHttpEventStream(
      runHttpRequest(() =>
        this.fetch(url, { method: "POST", headers, body: JSON.stringify(input) })
      ),
    );
  }
}

async function post(
  t: TestServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return await t.fetch(path, { method: "POST", json: body, headers });
}

/** Starts an AG-UI run of the long answer on `threadId` and returns its stream's reader. */
async function longRun(t: TestServer, threadId: string, onDisconnect?: string) {
  const res = await post(t, "/ag-ui/run", {
    threadId,
    runId: crypto.randomUUID(),
    messages: [{ id: crypto.randomUUID(), role: "user", content: WORDS }],
    forwardedProps: { model: PACED, ...(onDisconnect ? { on_disconnect: onDisconnect } : {}) },
  });
  assert.equal(res.status, 200);
  return { runId: res.headers.get("x-run-id")!, stream: readSse(res) };
}

function textOf(events: { event?: string; data: string }[]): string {
  return events.filter((e) => e.event === "TEXT_MESSAGE_CONTENT")
    .map((e) => JSON.parse(e.data).delta).join("");
}

const pubsubs: [string, Record<string, unknown> | null][] = [
  ["memory", {}],
  ["redis", testRedisUrl ? { kind: "redis", url: testRedisUrl } : null],
];

for (const [label, pubsub] of pubsubs) {
  Deno.test({ name: `AG-UI connect (${label} pub/sub)`, ignore: pubsub === null }, async (tt) => {
    await using t = await startTestServer({
      manifest: {
        ...manifest,
        // No re-attach grace: a dropped stream cancels its run at once (docs/api.md).
        runtime: {
          pubsub: { ...pubsub, prefix: uniqueName("agui") },
          attached: { reattach_grace: 0 },
        },
      },
    });

    await tt.step("a run dropped at a random frame goes on; connect resumes it", async () => {
      const cut = randomCut(3, 200);
      const threadId = crypto.randomUUID();
      const { stream: first } = await longRun(t, threadId, "continue");
      for (let i = 0; i < cut; i++) assert.ok(!(await first.next()).done);
      await first.cancel();
      const cursor = first.events.at(-1)!.id!;
      // The client kept its messages and the cursor; the official client applies what follows.
      const recorder = new RecordingFetch();
      const agent = new ResumableAgent({
        url: `${t.url}/ag-ui/run`,
        threadId,
        fetch: recorder.fetch,
      });
      agent.lastEventId = cursor;
      await agent.connectAgent();
      const [text] = await Promise.all(recorder.bodies);
      // The resumed stream stands alone for the client: the thread at the cursor, then the rest.
      const events = checkStream(text);
      const sequenced = parseSse(text).events.filter((e) => e.id !== undefined);
      const ids = [...first.events, ...sequenced].map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, "no frame twice");
      assert.equal(
        textOf(first.events) + textOf(sequenced),
        WORDS,
        `the whole text, once (dropped after frame ${cut}, cursor ${cursor})`,
      );
      // The snapshot at the cursor holds what the client had of the answer so far.
      const snapshot = events.find((e) => e.type === "MESSAGES_SNAPSHOT")!;
      const partial = (snapshot.messages as { role: string; content?: string }[])
        .filter((m) => m.role === "assistant").map((m) => m.content ?? "").join("");
      assert.equal(partial, textOf(first.events));
      assert.equal(events.at(-1)!.type, "RUN_FINISHED");
      assert.deepEqual(
        agent.messages.filter((m) => m.role === "assistant").map((m) => m.content),
        [WORDS],
      );
    });

    await tt.step("a reloaded @ag-ui/client app connects to the run in progress", async () => {
      const threadId = crypto.randomUUID();
      const { stream: first } = await longRun(t, threadId, "continue");
      await first.until("TEXT_MESSAGE_CONTENT");
      await first.cancel();
      // The page reloaded: a new agent that knows only the thread id.
      const agent = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId });
      await agent.connectAgent();
      const assistant = agent.messages.filter((m) => m.role === "assistant");
      assert.deepEqual(assistant.map((m) => m.content), [WORDS], "the answer whole, once");
      assert.equal(agent.messages[0].content, WORDS, "the user's message");
      // Connected again once the run is over: the thread as it is, nothing twice.
      const again = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId });
      await again.connectAgent();
      assert.deepEqual(again.messages, agent.messages);
    });

    await tt.step("the default on_disconnect cancels; connect shows the thread", async () => {
      const threadId = crypto.randomUUID();
      const { runId, stream: first } = await longRun(t, threadId);
      await first.until("TEXT_MESSAGE_CONTENT");
      await first.cancel();
      await eventually(
        async () => (await (await t.fetch(`/v1/runs/${runId}`)).json()).status === "cancelled",
        {
          what: "the run to be cancelled",
        },
      );
      const agent = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId });
      let outcome: string | undefined;
      await agent.connectAgent({}, { onRunFinishedEvent: (e) => void (outcome = e.outcome) });
      assert.equal(agent.messages[0].content, WORDS);
      // The cut answer does not look finished: the outcome the run's own stream ended with.
      assert.equal(outcome, "cancelled");
    });

    await tt.step("a thread agentd has never seen is an empty one, not a 404", async () => {
      const threadId = crypto.randomUUID();
      const res = await post(t, "/ag-ui/connect", { threadId, runId: "r", messages: [] });
      assert.equal(res.status, 200);
      const types = checkStream(await res.text()).map((e) => e.type);
      assert.deepEqual(types, [
        "RUN_STARTED",
        "MESSAGES_SNAPSHOT",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
      ]);
      // A new chat's first load through the official client: no error, nothing there.
      const agent = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId });
      let outcome: string | undefined;
      await agent.connectAgent({}, { onRunFinishedEvent: (e) => void (outcome = e.outcome) });
      assert.deepEqual(agent.messages, []);
      assert.equal(outcome, "success");
      // Nothing was stored by looking.
      assert.equal((await t.fetch(`/v1/sessions/${threadId}`)).status, 404);
    });
  });
}

Deno.test("a thread whose last run failed connects with its RUN_ERROR", async () => {
  await using failing = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => Response.json({ error: { message: "upstream exploded" } }, { status: 500 }),
  );
  await using t = await startTestServer({
    manifest: {
      ...manifest,
      agent: {
        name: "ag-ui-failing",
        model: {
          provider: "openai",
          model: "gpt-4o-mini",
          base_url: `http://127.0.0.1:${(failing.addr as Deno.NetAddr).port}/v1`,
          api_key: "test-key",
          retry: { max_attempts: 1, initial_backoff: 0, max_backoff: 0 },
        },
      },
    },
  });
  const threadId = crypto.randomUUID();
  const res = await post(t, "/ag-ui/run", {
    threadId,
    runId: crypto.randomUUID(),
    messages: [{ id: crypto.randomUUID(), role: "user", content: "anyone there?" }],
  });
  const own = checkStream(await res.text()).at(-1)!;
  assert.equal(own.type, "RUN_ERROR");
  // A reload through the official client: the thread back, and the error its run ended with.
  const agent = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId });
  let finished = false;
  let error: { message: string; code?: string } | undefined;
  await agent.connectAgent({}, {
    onRunFinishedEvent: () => void (finished = true),
    onRunErrorEvent: ({ event }) => void (error = event),
  });
  assert.equal(finished, false, "no success for a failed run");
  assert.equal(error?.code, own.code);
  assert.equal(error?.message, own.message);
  assert.equal(agent.messages[0].content, "anyone there?");
});

Deno.test("CopilotKit's resume: the interrupted run's runId again, with resume entries", async () => {
  await using t = await startTestServer({ manifest });
  const agent = new ResumableAgent({ url: `${t.url}/ag-ui/run` });
  agent.addMessage({
    id: crypto.randomUUID(),
    role: "user",
    content: '/call delete_file {"path": "/tmp/a"}',
  });
  const runId = crypto.randomUUID();
  let finished: Record<string, unknown> | undefined;
  await agent.runAgent({ runId }, {
    onRunFinishedEvent: (e) => void (finished = e as unknown as Record<string, unknown>),
  });
  assert.equal(finished?.outcome, "interrupt");
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt.reason, "tool_approval");

  // The page reloaded: the thread comes back with what it waits for.
  const reloaded = new ResumableAgent({ url: `${t.url}/ag-ui/run`, threadId: agent.threadId });
  await reloaded.connectAgent();
  assert.deepEqual(reloaded.pendingInterrupts.map((i) => i.id), [interrupt.id]);
  assert.deepEqual(reloaded.messages, agent.messages);

  // useInterrupt answers with the interrupted run's id and a resume entry.
  const seen: BaseEvent[] = [];
  await reloaded.runAgent({
    runId,
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
  }, { onEvent: ({ event }) => void seen.push(event) });
  const started = seen.find((e) => e.type === "RUN_STARTED") as unknown as { runId: string };
  assert.equal(started.runId, runId, "the stream speaks of the run the client resumed");
  const result = seen.find((e) => e.type === "TOOL_CALL_RESULT") as unknown as {
    toolCallId: string;
    content: string;
  };
  assert.equal(result.toolCallId, interrupt.id);
  assert.equal(result.content, '{"deleted":"/tmp/a"}');
  assert.deepEqual(reloaded.pendingInterrupts, []);
  assert.equal(reloaded.messages.at(-1)!.content, 'delete_file returned: {"deleted":"/tmp/a"}');
  // Natively: the interrupted run stays as it was; the continuation is `<runId>:2`.
  const native = await (await t.fetch(`/v1/runs/${runId}:2`)).json();
  assert.equal(native.status, "completed");
  assert.equal(native.session_id, agent.threadId);
  assert.equal((await (await t.fetch(`/v1/runs/${runId}`)).json()).status, "interrupted");
  // A completed run's id is not continued: reusing it is the usual 409002.
  const reused = await post(t, "/ag-ui/run", {
    threadId: agent.threadId,
    runId: `${runId}:2`,
    messages: [],
  });
  assert.equal(reused.status, 409);
  assert.equal((await reused.json()).code, 409002);
});
