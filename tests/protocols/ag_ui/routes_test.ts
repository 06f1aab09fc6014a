/**
 * The AG-UI add-on over real HTTP, driven by the official client (`@ag-ui/client` HttpAgent) and,
 * where the client cannot express a case (snake_case input, dropped connections), by plain fetch.
 * Every stream a test produces is checked event by event (helpers.ts `checkStream`).
 */
import assert from "node:assert/strict";
import { HttpAgent, type Message as AgUiMessage, type RunAgentParameters } from "@ag-ui/client";
import type { Checkpoint, Message, Run } from "../../../src/api/schemas.ts";
import { toAgUiMessage } from "../../../src/protocols/ag_ui/messages.ts";
import {
  eventually,
  pacedModel,
  readEvents,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";
import {
  APPROVAL_TOOL,
  checkStream,
  fixture,
  readStream,
  RecordingFetch,
  types,
  type WireEvent,
} from "./helpers.ts";

const manifest = {
  agent: { name: "ag-ui-test", model: { provider: "echo" } },
  tool: {
    progress: {
      kind: "javascript",
      module: fixture("progress_tool.js"),
      description: "reports progress and counts its calls in the state",
      parameters: { type: "object", properties: { steps: { type: "integer" } } },
    },
    delete_file: APPROVAL_TOOL,
  },
  http_server: { protocol: { ag_ui: {} } },
  // A dropped run stream cancels its run at once.
  runtime: { attached: { reattach_grace: 0 } },
};

/** What the official client reports through its subscriber for one run. */
interface Seen {
  events: WireEvent[];
  finished?: Record<string, unknown>;
  error?: Record<string, unknown>;
  custom: { name: string; value: unknown }[];
}

async function run(agent: HttpAgent, params: RunAgentParameters = {}): Promise<Seen> {
  const seen: Seen = { events: [], custom: [] };
  await agent.runAgent(params, {
    onEvent: ({ event }) => {
      seen.events.push(event as WireEvent);
    },
    onRunFinishedEvent: (e) => {
      seen.finished = e as unknown as Record<string, unknown>;
    },
    onRunErrorEvent: ({ event }) => {
      seen.error = event as unknown as Record<string, unknown>;
    },
    onCustomEvent: ({ event }) => {
      seen.custom.push({ name: event.name, value: event.value });
    },
  });
  return seen;
}

async function json<T>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

async function sessionMessages(t: TestServer, sessionId: string): Promise<Message[]> {
  const page = await json<{ items: Message[] }>(
    await t.fetch(`/v1/sessions/${sessionId}/messages?per_page=1000`),
  );
  return page.items;
}

async function getRun(t: TestServer, runId: string): Promise<Run> {
  const res = await t.fetch(`/v1/runs/${runId}`);
  assert.equal(res.status, 200);
  return await json<Run>(res);
}

async function latestContext(t: TestServer, runId: string): Promise<unknown> {
  const r = await getRun(t, runId);
  const page = await json<{ items: Checkpoint[] }>(
    await t.fetch(`/v1/sessions/${r.session_id}/checkpoints?per_page=1000`),
  );
  return page.items.find((c) => c.checkpoint_id === r.checkpoint_id)!.state.context;
}

/** The client's messages and the session's, side by side in AG-UI form. */
async function assertAgree(t: TestServer, agent: HttpAgent): Promise<AgUiMessage[]> {
  const stored = (await sessionMessages(t, agent.threadId)).map(toAgUiMessage);
  assert.deepEqual(agent.messages, stored);
  return stored;
}

function agentFor(t: TestServer, recorder: RecordingFetch, threadId?: string): HttpAgent {
  return new HttpAgent({ url: `${t.url}/ag-ui/run`, fetch: recorder.fetch, threadId });
}

function runIdOf(seen: Seen): string {
  return seen.events[0].runId as string;
}

const slow = (delay_ms: number) => ({
  model: pacedModel(delay_ms),
});

for (const kind of storeKinds) {
  Deno.test(`AG-UI add-on (${kind})`, async (tt) => {
    await using t = await startTestServer({ store: kind, manifest });
    const recorder = new RecordingFetch();
    await tt.step("a conversation over two runs on one thread", async () => {
      const agent = agentFor(t, recorder);
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "hello there" });
      const first = await run(agent);
      assert.deepEqual(types(first.events), [
        "RUN_STARTED",
        "MESSAGES_SNAPSHOT",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
      ]);
      assert.equal(first.events[0].threadId, agent.threadId);
      assert.equal(first.finished?.outcome, "success");
      assert.deepEqual(first.finished?.result, { text: "hello there", context: null });
      const afterFirst = await assertAgree(t, agent);
      assert.deepEqual(afterFirst.map((m) => [m.role, m.content]), [
        ["user", "hello there"],
        ["assistant", "hello there"],
      ]);

      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "and again" });
      const second = await run(agent);
      assert.equal(second.events[0].threadId, agent.threadId);
      const sent = recorder.requests.at(-1) as { threadId: string; messages: unknown[] };
      assert.equal(sent.threadId, agent.threadId);
      assert.equal(sent.messages.length, 3, "the official client sends the whole conversation");
      const stored = await assertAgree(t, agent);
      // the whole conversation was sent again; nothing was stored twice
      assert.deepEqual(stored.map((m) => [m.role, m.content]), [
        ["user", "hello there"],
        ["assistant", "hello there"],
        ["user", "and again"],
        ["assistant", "and again"],
      ]);

      // an AG-UI run is a native run: same records, same session
      const record = await getRun(t, runIdOf(second));
      assert.equal(record.session_id, agent.threadId);
      assert.equal(record.status, "completed");
      assert.equal(record.parent_checkpoint_id !== null, true);
      const runs = await json<{ count: number }>(
        await t.fetch(`/v1/sessions/${agent.threadId}/runs`),
      );
      assert.equal(runs.count, 2);
    });

    await tt.step("a client that rewrites history is brought back in line", async () => {
      const agent = agentFor(t, recorder);
      agent.addMessage({ id: "hist-1", role: "user", content: "original" });
      await run(agent);
      // the client edits its first message, then asks again: the session's history stands
      agent.setMessages([
        { id: "hist-1", role: "user", content: "edited" },
        ...agent.messages.slice(1),
        { id: "hist-2", role: "user", content: "next" },
      ]);
      const seen = await run(agent);
      const snapshot = seen.events.find((e) => e.type === "MESSAGES_SNAPSHOT")!;
      assert.equal((snapshot.messages as AgUiMessage[])[0].content, "original");
      const stored = await assertAgree(t, agent);
      assert.deepEqual(stored.map((m) => m.content), ["original", "original", "next", "next"]);
    });

    await tt.step("a server tool streams CUSTOM events and updates the state", async () => {
      const agent = agentFor(t, recorder);
      agent.addMessage({
        id: crypto.randomUUID(),
        role: "user",
        content: '/call progress {"steps": 3}',
      });
      const first = await run(agent);
      assert.deepEqual(types(first.events), [
        "RUN_STARTED",
        "MESSAGES_SNAPSHOT",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "STEP_STARTED",
        "CUSTOM",
        "CUSTOM",
        "CUSTOM",
        "TOOL_CALL_RESULT",
        // the thread had no state: an empty snapshot first, then the change as a delta
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
      ]);
      assert.deepEqual(
        first.custom,
        [1, 2, 3].map((done) => ({
          name: "progress",
          value: { done, total: 3 },
        })),
      );
      const snapshot = first.events.find((e) => e.type === "STATE_SNAPSHOT");
      assert.deepEqual(snapshot?.snapshot, {});
      const firstDelta = first.events.find((e) => e.type === "STATE_DELTA");
      assert.deepEqual(firstDelta?.delta, [{ op: "add", path: "/counter", value: 1 }]);
      const stamps = first.events.map((e) => e.timestamp as number);
      assert.deepEqual(stamps, stamps.toSorted((a, b) => a - b), "timestamps never go back");
      assert.deepEqual(agent.state, { counter: 1 });
      assert.deepEqual(await latestContext(t, runIdOf(first)), agent.state);

      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "/call progress {}" });
      const second = await run(agent);
      const delta = second.events.find((e) => e.type === "STATE_DELTA");
      assert.deepEqual(delta?.delta, [{ op: "replace", path: "/counter", value: 2 }]);
      assert.deepEqual(agent.state, { counter: 2 });
      assert.deepEqual(await latestContext(t, runIdOf(second)), agent.state);
      await assertAgree(t, agent);
      // emits are live only: nothing of them is stored
      const stored = JSON.stringify(await sessionMessages(t, agent.threadId));
      assert.ok(!stored.includes('"done"'));
    });

    await tt.step("the client's state becomes the context", async () => {
      const agent = agentFor(t, recorder);
      agent.setState({ counter: 41, theme: "dark" });
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "/call progress {}" });
      const seen = await run(agent);
      assert.deepEqual(agent.state, { counter: 42, theme: "dark" });
      assert.deepEqual(await latestContext(t, runIdOf(seen)), agent.state);
      assert.deepEqual(seen.finished?.result, {
        text: 'progress returned: {"counter":42}',
        context: { counter: 42, theme: "dark" },
      });
    });

    await tt.step("a front-end tool round trip", async () => {
      const agent = agentFor(t, recorder);
      const tools = [{
        name: "ask_user",
        description: "asks the user a question in the UI",
        parameters: { type: "object", properties: { question: { type: "string" } } },
      }];
      agent.addMessage({
        id: crypto.randomUUID(),
        role: "user",
        content: '/call ask_user {"question": "ready?"}',
      });
      const first = await run(agent, { tools });
      assert.equal(first.finished?.outcome, "success");
      const pending = first.finished?.pendingToolCallIds as string[];
      assert.equal(pending.length, 1);
      const call = agent.messages.at(-1)!;
      assert.equal(call.role, "assistant");
      const toolCall = (call as { toolCalls: { id: string; function: { arguments: string } }[] })
        .toolCalls[0];
      assert.equal(toolCall.id, pending[0]);
      assert.deepEqual(JSON.parse(toolCall.function.arguments), { question: "ready?" });
      // natively the run waits for the client
      const record = await getRun(t, runIdOf(first));
      assert.equal(record.status, "interrupted");
      assert.equal(record.interrupt_payload?.reason, "tool_calls");
      await assertAgree(t, agent);

      agent.addMessage({
        id: crypto.randomUUID(),
        role: "tool",
        toolCallId: pending[0],
        content: "yes!",
      });
      const second = await run(agent, { tools });
      assert.equal(second.finished?.outcome, "success");
      assert.deepEqual(second.finished?.pendingToolCallIds, []);
      assert.ok(
        !second.events.some((e) => e.type === "TOOL_CALL_RESULT"),
        "the client's own tool message is not echoed back",
      );
      const stored = await assertAgree(t, agent);
      assert.deepEqual(stored.at(-1), {
        id: stored.at(-1)!.id,
        role: "assistant",
        content: "ask_user returned: yes!",
      });
      assert.equal((await getRun(t, runIdOf(second))).status, "completed");
    });

    await tt.step("an approval interrupt resumed with resume", async () => {
      const agent = agentFor(t, recorder);
      agent.addMessage({
        id: crypto.randomUUID(),
        role: "user",
        content: '/call delete_file {"path": "/tmp/a"}',
      });
      const first = await run(agent);
      assert.equal(first.finished?.outcome, "interrupt");
      const [interrupt] = first.finished?.interrupts as Record<string, unknown>[];
      assert.equal(interrupt.reason, "tool_approval");
      assert.equal(interrupt.toolCallId, interrupt.id);
      assert.match(String(interrupt.message), /delete_file/);
      assert.deepEqual(agent.pendingInterrupts.map((i) => i.id), [interrupt.id]);
      assert.equal((await getRun(t, runIdOf(first))).status, "interrupted");

      // the official client refuses to go on without answering
      await assert.rejects(() => agent.runAgent(), /pending interrupt/);

      const second = await run(agent, {
        resume: [{ interruptId: interrupt.id as string, status: "resolved" }],
      });
      const result = second.events.find((e) => e.type === "TOOL_CALL_RESULT")!;
      assert.equal(result.toolCallId, interrupt.id);
      assert.equal(result.content, '{"deleted":"/tmp/a"}');
      assert.equal(second.finished?.outcome, "success");
      assert.deepEqual(agent.pendingInterrupts, []);
      const stored = await assertAgree(t, agent);
      assert.equal(stored.at(-1)!.content, 'delete_file returned: {"deleted":"/tmp/a"}');

      // refused: cancelled with a reason
      agent.addMessage({
        id: crypto.randomUUID(),
        role: "user",
        content: '/call delete_file {"path": "/etc"}',
      });
      const third = await run(agent);
      const [again] = third.finished?.interrupts as { id: string }[];
      const fourth = await run(agent, {
        resume: [{ interruptId: again.id, status: "cancelled", payload: { reason: "no way" } }],
      });
      const refused = fourth.events.find((e) => e.type === "TOOL_CALL_RESULT")!;
      assert.deepEqual(JSON.parse(refused.content as string), {
        error: "the user rejected this tool call",
        reason: "no way",
      });
      await assertAgree(t, agent);
    });

    await tt.step("an approval and a front-end tool in one stop", async () => {
      const agent = agentFor(t, recorder);
      const tools = [{ name: "ask_user", description: "asks", parameters: { type: "object" } }];
      agent.addMessage({
        id: crypto.randomUUID(),
        role: "user",
        content: '/call delete_file {"path": "/x"}\n/call ask_user {"question": "sure?"}',
      });
      const first = await run(agent, { tools });
      assert.equal(first.finished?.outcome, "interrupt");
      const interrupts = first.finished?.interrupts as { id: string; reason: string }[];
      assert.deepEqual(interrupts.map((i) => i.reason), ["tool_approval", "client_tool"]);
      const second = await run(agent, {
        tools,
        resume: [
          { interruptId: interrupts[0].id, status: "resolved", payload: { approved: true } },
          { interruptId: interrupts[1].id, status: "resolved", payload: "sure" },
        ],
      });
      const stored = await assertAgree(t, agent);
      assert.equal(
        stored.at(-1)!.content,
        'delete_file returned: {"deleted":"/x"}\nask_user returned: "sure"',
      );
      assert.equal(second.finished?.outcome, "success");
    });

    await tt.step("a step-limit interrupt, resumed by continuing", async () => {
      await using k = await startTestServer({
        store: kind,
        manifest: { ...manifest, agent: { ...manifest.agent, max_steps: 1 } },
      });
      const local = new RecordingFetch();
      const agent = agentFor(k, local);
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "/call progress {}" });
      const first = await run(agent);
      assert.equal(first.finished?.outcome, "interrupt");
      const [interrupt] = first.finished?.interrupts as Record<string, unknown>[];
      assert.equal(interrupt.id, `${runIdOf(first)}:max_steps`);
      assert.equal(interrupt.reason, "max_steps");
      assert.equal(interrupt.toolCallId, undefined);
      const second = await run(agent, {
        resume: [{ interruptId: interrupt.id as string, status: "resolved" }],
      });
      assert.equal(second.finished?.outcome, "success");
      assert.equal(agent.messages.at(-1)!.content, 'progress returned: {"counter":1}');
      await assertAgree(k, agent);
      await local.checkAll();
    });

    await tt.step("snake_case input, as the spec's examples write it", async () => {
      const threadId = `snake-${crypto.randomUUID()}`;
      const res = await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          thread_id: threadId,
          run_id: `${threadId}-r1`,
          messages: [{ role: "user", content: "snake case works" }],
          context: [{ description: "user name", value: "Ada" }],
          forwarded_props: { model: { override: { provider: "echo", model: "echo" } } },
        },
      });
      assert.equal(res.headers.get("x-run-id"), `${threadId}-r1`);
      const events = await readStream(res);
      assert.deepEqual(events[0].threadId, threadId);
      assert.deepEqual(events[0].runId, `${threadId}-r1`);
      const text = events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta);
      assert.equal(text.join(""), "snake case works");

      const again = await readStream(
        await t.fetch("/ag-ui/run", {
          method: "POST",
          json: { thread_id: threadId, messages: [{ role: "user", content: "more" }] },
        }),
      );
      const snapshot = again.find((e) => e.type === "MESSAGES_SNAPSHOT")!;
      assert.deepEqual(
        (snapshot.messages as AgUiMessage[]).map((m) => m.content),
        ["snake case works", "snake case works", "more"],
      );
      assert.equal((await getRun(t, again[0].runId as string)).session_id, threadId);
    });

    await tt.step(
      "invalid input is a 422 before any stream, and nothing is written",
      async () => {
        const post = (body: unknown) => t.fetch("/ag-ui/run", { method: "POST", json: body });
        const cases: [unknown, string, string][] = [
          [{ threadId: "x1" }, "messages", "required"],
          [{ messages: [{ id: "m", role: "robot", content: "x" }] }, "messages.0.role", "enum"],
          [{ thread_id: "x2", messages: [], state: "dark" }, "state", "type"],
          [{ messages: [{ role: "user", content: 5 }] }, "messages.0.content", "type"],
          [
            {
              threadId: "x3",
              messages: [],
              forwardedProps: { model: { override: { provider: "nope" } } },
            },
            "forwardedProps.model.override.provider",
            "unknown_provider",
          ],
          [
            { threadId: "x4", messages: [], tools: [{ name: "progress", description: "" }] },
            "tools.0.name",
            "tool_name_conflict",
          ],
          [
            { threadId: "x5", messages: [], resume: [{ interruptId: "i", status: "resolved" }] },
            "resume.0.interruptId",
            "unknown_interrupt",
          ],
        ];
        for (const [body, field, code] of cases) {
          const res = await post(body);
          const err = await json<
            { code: number; fields: { field: string; errors: { code: string }[] }[] }
          >(
            res,
          );
          assert.equal(res.status, 422, JSON.stringify(err));
          assert.match(res.headers.get("content-type") ?? "", /application\/json/);
          assert.equal(err.code, 422000);
          assert.deepEqual(
            err.fields.map((f) => [f.field, f.errors.map((e) => e.code)]),
            [[field, [code]]],
            JSON.stringify(body),
          );
        }
        for (const id of ["x1", "x2", "x3", "x4", "x5"]) {
          assert.equal((await t.fetch(`/v1/sessions/${id}`)).status, 404, `no session ${id}`);
        }
        const malformed = await t.fetch("/ag-ui/run", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{",
        });
        assert.equal(malformed.status, 400);
        await malformed.body?.cancel();

        // the official client surfaces the 422 as a rejected run
        const agent = agentFor(t, recorder);
        agent.addMessage({
          id: "bad",
          role: "user",
          content: [{ type: "image", source: { type: "url", value: "http://x" } }],
        });
        // (the client also logs the failure; keep the test output quiet)
        const log = console.error;
        console.error = () => {};
        try {
          await assert.rejects(() => agent.runAgent(), /HTTP 422/);
        } finally {
          console.error = log;
        }
      },
    );

    await tt.step("a client that goes away cancels its run", async () => {
      const res = await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          messages: [{ role: "user", content: "word ".repeat(200) }],
          forwardedProps: slow(20),
        },
      });
      assert.equal(res.status, 200);
      const reader = readSse(res);
      const started = JSON.parse((await reader.until("RUN_STARTED")).data) as WireEvent;
      await reader.until("TEXT_MESSAGE_CONTENT");
      await reader.cancel();
      const status = await eventually(async () => {
        const r = await getRun(t, started.runId as string);
        return r.status === "running" ? undefined : r.status;
      }, { what: "the run to stop" });
      assert.equal(status, "cancelled");
    });

    await tt.step("cancel and re-attach work on an AG-UI run through /v1", async () => {
      const res = await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          messages: [{ role: "user", content: "word ".repeat(200) }],
          forwardedProps: slow(20),
        },
      });
      assert.equal(res.status, 200);
      const reader = readSse(res);
      const started = JSON.parse((await reader.until("RUN_STARTED")).data) as WireEvent;
      const runId = started.runId as string;
      await reader.until("TEXT_MESSAGE_CONTENT");
      const attached = await t.fetch(`/v1/runs/${runId}/events`);
      assert.equal(attached.status, 200);
      const cancel = await t.fetch(`/v1/runs/${runId}/cancel`, { method: "PUT" });
      assert.equal(cancel.status, 204);
      await reader.all();
      const events = checkStream(reader.raw);
      assert.deepEqual(events.at(-1)!.outcome, { type: "cancelled" });
      const native = await readEvents(attached);
      assert.deepEqual([native.at(-1)!.kind, native.at(-1)!.status], [
        "run_finished",
        "cancelled",
      ]);
      assert.equal((await getRun(t, runId)).status, "cancelled");
    });

    await tt.step("keep-alive comments between frames do not disturb the client", async () => {
      await using k = await startTestServer({
        store: kind,
        manifest: {
          ...manifest,
          http_server: { keepalive: 5, protocol: { ag_ui: { path: "/agui" } } },
        },
      });
      const local = new RecordingFetch();
      const agent = new HttpAgent({ url: `${k.url}/agui/run`, fetch: local.fetch });
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "a b c d e f" });
      const seen = await run(agent, { forwardedProps: slow(15) });
      assert.equal(seen.finished?.outcome, "success");
      const [raw] = await Promise.all(local.bodies);
      assert.match(raw, /\n\n: keep-alive\n\n/);
      await local.checkAll();
      assert.equal((await k.fetch("/ag-ui/run", { method: "POST", json: {} })).status, 404);
    });

    const streams = await recorder.checkAll();
    assert.ok(streams.length >= 15, `every client stream was checked (${streams.length})`);
  });
}

Deno.test("provider failure gives RUN_ERROR; forwardedProps.model switches the model", async () => {
  await using failing = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      Response.json({ error: { message: "upstream exploded", type: "server_error" } }, {
        status: 500,
      }),
  );
  const { port } = failing.addr as Deno.NetAddr;
  await using t = await startTestServer({
    manifest: {
      ...manifest,
      agent: {
        name: "ag-ui-failing",
        model: {
          provider: "openai",
          model: "gpt-4o-mini",
          base_url: `http://127.0.0.1:${port}/v1`,
          api_key: "test-key",
          retry: { max_attempts: 1, initial_backoff: 0, max_backoff: 0 },
        },
      },
    },
  });
  const recorder = new RecordingFetch();
  const agent = agentFor(t, recorder);
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "anyone there?" });
  const failed = await run(agent);
  assert.equal(failed.finished, undefined);
  assert.equal(failed.events.at(-1)!.type, "RUN_ERROR");
  assert.equal(typeof failed.error?.message, "string");
  assert.equal(typeof failed.error?.code, "string");
  const record = await getRun(t, runIdOf(failed));
  assert.equal(record.status, "failed");
  assert.equal(failed.error?.code, record.error?.code);
  assert.equal(failed.error?.code, "model_http_500");

  // the same thread, switched to the echo model for one run
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "echo me" });
  const switched = await run(agent, {
    forwardedProps: { model: { override: { provider: "echo", model: "echo" } } },
  });
  assert.equal(switched.finished?.outcome, "success");
  assert.equal(agent.messages.at(-1)!.content, "echo me");
  await assertAgree(t, agent);

  await recorder.checkAll();
});
