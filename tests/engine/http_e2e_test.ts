/**
 * The engine driven through real runs over HTTP: the echo model calling real JavaScript tools (in
 * Deno sandbox processes) and Python tools (in OS-sandboxed processes), client tools and approvals interrupted and resumed,
 * capability overrides, forks, and a provider failure from a local OpenAI-compatible server.
 */
import assert from "node:assert/strict";
import {
  type EventData,
  readEvents,
  startTestServer,
  type TestServer,
  userText,
} from "../_kit/mod.ts";
import { httpError, startFakeOpenAI } from "../models/fake_openai.ts";
import { newMarker, noneMarked } from "../tools/helpers.ts";

const fixtures = new URL("../tools/fixtures/", import.meta.url).pathname;

const manifest = {
  agent: {
    name: "e2e",
    model: { provider: "echo" },
    capabilities: ["basic"],
  },
  capability: {
    basic: { tools: ["progress", "fetch_url", "py_crash", "py_hang", "pay"] },
    extra: { tools: ["py_success"], instructions: "You may count words." },
  },
  tool: {
    progress: { kind: "javascript", module: `${fixtures}js_tools.ts`, function: "progress" },
    fetch_url: { kind: "javascript", module: `${fixtures}js_tools.ts`, function: "fetchUrl" },
    py_crash: { kind: "python", module: `${fixtures}py_tools.py`, function: "crash" },
    py_hang: {
      kind: "python",
      module: `${fixtures}py_tools.py`,
      function: "hang_marked",
      // Long enough for the module to load on a loaded machine: the call must time out while it
      // runs (its child started), not while loading.
      timeout: 2500,
    },
    py_success: { kind: "python", module: `${fixtures}py_tools.py`, function: "success" },
    pay: {
      kind: "javascript",
      module: `${fixtures}js_tools.ts`,
      function: "echoContext",
      requires_approval: true,
    },
  },
};

async function run(t: TestServer, body: Record<string, unknown>): Promise<EventData[]> {
  const res = await t.fetch("/v1/runs", { method: "POST", json: body });
  assert.equal(res.status, 200, await res.clone().text());
  return await readEvents(res);
}

const finished = (events: EventData[]) => events.at(-1)!;
const results = (events: EventData[]) => events.filter((e) => e.kind === "tool_call_result");

Deno.test("engine end to end over HTTP", async (tt) => {
  await using t = await startTestServer({ manifest });
  await tt.step("JS tool: live custom events, state delta, checkpointed context", async () => {
    const events = await run(t, {
      session_id: "js",
      context: { counter: 1 },
      messages: [userText('/call progress {"task": "build"}')],
    });
    const kinds = events.map((e) => e.kind);
    const custom = events.filter((e) => e.kind === "custom");
    assert.deepEqual(custom.map((e) => (e.value as { value: number }).value), [0, 0.5, 1]);
    const resultAt = kinds.indexOf("tool_call_result");
    assert.ok(kinds.indexOf("custom") < resultAt, "emits arrive before the result");
    const delta = events.find((e) => e.kind === "state_delta")!;
    assert.deepEqual(delta.delta, [
      { op: "replace", path: "/counter", value: 2 },
      { op: "add", path: "/last_task", value: "build" },
    ]);
    const end = finished(events);
    assert.equal(end.status, "completed");
    assert.deepEqual((end.result as { context: unknown }).context, {
      counter: 2,
      last_task: "build",
    });
    const cps = await (await t.fetch("/v1/sessions/js/checkpoints")).json();
    assert.deepEqual(cps.items.at(-1).state.context, { counter: 2, last_task: "build" });
    const run2 = await run(t, { session_id: "js", messages: [userText("/call progress {}")] });
    assert.equal((finished(run2).result as { context: { counter: number } }).context.counter, 3);
  });

  await tt.step("JS tool without net permission cannot fetch", async () => {
    await using target = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("secret"),
    );
    const url = `http://127.0.0.1:${target.addr.port}/`;
    const events = await run(t, {
      messages: [userText(`/call fetch_url {"url": "${url}"}`)],
    });
    const [result] = results(events);
    assert.equal(result.is_error, true);
    assert.match(JSON.stringify(result.content), /net|permission/i);
    assert.doesNotMatch(JSON.stringify(result.content), /secret/);
    assert.equal(finished(events).status, "completed", "the model saw the error and answered");
  });

  await tt.step("Python tool that crashes: a tool error the model sees", async () => {
    const events = await run(t, { messages: [userText("/call py_crash {}")] });
    const [result] = results(events);
    assert.equal(result.is_error, true);
    // The model reads `{"error": "<message>"}`: one wrapping, whatever the runner.
    const content = result.content as { error: unknown };
    assert.deepEqual(Object.keys(content), ["error"]);
    assert.equal(typeof content.error, "string");
    assert.match(content.error as string, /failed on purpose/);
    assert.equal(finished(events).status, "completed");
  });

  await tt.step("Python tool that hangs: timed out, no process left", async () => {
    const marker = newMarker();
    const events = await run(t, {
      messages: [userText(`/call py_hang {"marker": "${marker}"}`)],
    });
    const pids = events.find((e) => e.kind === "custom" && e.name === "pids");
    const [result] = results(events);
    assert.equal(result.is_error, true);
    assert.match(JSON.stringify(result.content), /timed out after 2500 ms/);
    assert.ok(pids, "the tool reported its pids (its child was running)");
    // The tool ran in its sandbox (its own PID namespace): its child is found by command line.
    assert.ok(await noneMarked(marker), "its child is gone");
  });

  await tt.step("two client tool calls interrupt, then resume", async () => {
    const tools = [
      { name: "get_city", description: "the user's city", parameters: { type: "object" } },
      { name: "get_time", description: "the user's time", parameters: { type: "object" } },
    ];
    const first = await run(t, {
      session_id: "client",
      tools,
      messages: [userText("/call get_city {}\n/call get_time {}")],
    });
    const end = finished(first);
    assert.equal(end.status, "interrupted");
    const pending = (end.interrupt_payload as { pending: { tool_call_id: string; kind: string }[] })
      .pending;
    assert.equal(pending.length, 2);
    assert.ok(pending.every((p) => p.kind === "client_tool"));
    const record = await (await t.fetch(`/v1/runs/${end.run_id}`)).json();
    assert.equal(record.status, "interrupted");
    assert.deepEqual(record.interrupt_payload, end.interrupt_payload);
    const second = await run(t, {
      session_id: "client",
      tools,
      messages: [userText("here you go")],
      resume_payload: {
        tool_results: [
          { tool_call_id: pending[0].tool_call_id, result: { city: "Paris" } },
          { tool_call_id: pending[1].tool_call_id, result: "10:00" },
        ],
      },
    });
    assert.equal(finished(second).status, "completed");
    const msgs = await (await t.fetch("/v1/sessions/client/messages")).json();
    const toolMsgs = msgs.items.filter((m: { role: string }) => m.role === "tool");
    assert.equal(toolMsgs.length, 2);
    // Resuming again: nothing is pending any more.
    const again = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        session_id: "client",
        messages: [userText("x")],
        resume_payload: { tool_results: [{ tool_call_id: pending[0].tool_call_id, result: 1 }] },
      },
    });
    assert.equal(again.status, 422);
    await again.body?.cancel();
  });

  await tt.step("approval granted runs the tool; refused tells the model", async () => {
    for (const approved of [true, false]) {
      const sid = `approve-${approved}`;
      const first = await run(t, {
        session_id: sid,
        messages: [userText('/call pay {"amount": 5}')],
      });
      const end = finished(first);
      assert.equal(end.status, "interrupted");
      const [pending] =
        (end.interrupt_payload as { pending: { tool_call_id: string; kind: string }[] })
          .pending;
      assert.equal(pending.kind, "approval");
      assert.equal(results(first).length, 0, "the tool did not run before approval");
      const second = await run(t, {
        session_id: sid,
        messages: [userText("decided")],
        resume_payload: {
          approvals: [{ tool_call_id: pending.tool_call_id, approved, reason: "budget" }],
        },
      });
      const [result] = results(second);
      if (approved) {
        assert.equal(result.is_error, false);
        assert.deepEqual((result.content as { args: unknown }).args, { amount: 5 });
      } else {
        assert.match(JSON.stringify(result.content), /reject|denied|budget/i);
      }
      assert.equal(finished(second).status, "completed");
    }
  });

  await tt.step("capability override: inherit, extend, replace, unknown", async () => {
    const available = async (override: unknown, tool: string) => {
      const events = await run(t, {
        capability_override: override,
        context: { counter: 0 },
        messages: [userText(`/call ${tool} {"text": "a b c"}`)],
      });
      return !(results(events)[0].is_error as boolean);
    };
    assert.equal(await available({ strategy: "inherit" }, "py_crash") === false, true);
    assert.equal(await available({ strategy: "inherit" }, "py_success"), false);
    assert.equal(
      await available({ strategy: "extend", capabilities: ["extra"] }, "py_success"),
      true,
    );
    assert.equal(
      await available({ strategy: "replace", capabilities: ["extra"] }, "py_success"),
      true,
    );
    const replaced = await run(t, {
      capability_override: { strategy: "replace", capabilities: ["extra"] },
      messages: [userText('/call progress {"task": "x"}')],
    });
    assert.match(JSON.stringify(results(replaced)[0].content), /not available/);
    const bad = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        capability_override: { strategy: "extend", capabilities: ["nope"] },
        messages: [userText("x")],
      },
    });
    assert.equal(bad.status, 422);
    const body = await bad.json();
    assert.equal(body.fields[0].field, "capability_override.capabilities.0");
  });

  await tt.step("fork from an earlier checkpoint_id", async () => {
    await run(t, { session_id: "fork", messages: [userText("first")] });
    const cps1 = await (await t.fetch("/v1/sessions/fork/checkpoints")).json();
    const forkPoint = cps1.items.at(-1).checkpoint_id;
    await run(t, { session_id: "fork", messages: [userText("second")] });
    const forked = await run(t, {
      session_id: "fork",
      checkpoint_id: forkPoint,
      messages: [userText("other branch")],
    });
    assert.equal(finished(forked).status, "completed");
    const snapshot = forked.find((e) => e.kind === "messages_snapshot")!;
    const texts = (snapshot.messages as { content: { value: string }[] }[])
      .map((m) => m.content[0]?.value);
    assert.deepEqual(texts, ["first", "first", "other branch"]);
    const runs = await (await t.fetch("/v1/sessions/fork/runs")).json();
    assert.equal(runs.items.at(-1).parent_checkpoint_id, forkPoint);
    const cps = await (await t.fetch("/v1/sessions/fork/checkpoints")).json();
    const old = cps.items.find((c: { state: { messages: unknown[] } }) =>
      JSON.stringify(c.state.messages).includes("second")
    );
    assert.ok(old, "the old branch stays readable");
  });

  await tt.step("unknown provider or model in an override: 422 before the run", async () => {
    for (const override of [{ provider: "nope" }, { model: "gpt-x" }]) {
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: { session_id: "never", model: { override }, messages: [userText("x")] },
      });
      assert.equal(res.status, 422);
      await res.body?.cancel();
    }
    const s = await t.fetch("/v1/sessions/never");
    await s.body?.cancel();
    assert.equal(s.status, 404);
  });
});

Deno.test("provider failure ends the run failed with the error payload", async () => {
  await using fake = startFakeOpenAI();
  fake.enqueue(httpError(500, "upstream exploded"), httpError(503, "still down"));
  await using t = await startTestServer({
    manifest: {
      agent: {
        name: "fails",
        model: {
          provider: "openai",
          model: "gpt-test",
          base_url: fake.url,
          api_key: "sk-test",
          retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 20 },
        },
      },
    },
  });
  const events = await run(t, { messages: [userText("hello")] });
  const end = finished(events);
  assert.equal(end.status, "failed");
  const error = end.error as Record<string, unknown>;
  assert.equal(error.provider, "openai");
  assert.equal(error.model, "gpt-test");
  assert.equal(error.attempts, 2);
  assert.match(String(error.code), /model_http_503/);
  assert.equal(fake.requests.length, 2);
  const record = await (await t.fetch(`/v1/runs/${end.run_id}`)).json();
  assert.equal(record.status, "failed");
  assert.deepEqual(record.error, error);
});
