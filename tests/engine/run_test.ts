/**
 * The ReAct graph (`runAgent`, engine/run.ts) on a real SQLite store with a scripted model: a text
 * answer, a tool step and the model's answer to its result, an unknown tool, and `max_steps`
 * (across the attempts of a resumed run too); a client call a lost attempt left pending waits
 * again.
 */
import assert from "node:assert/strict";
import type { RunEvent, RunEventOf } from "../../src/api/events.ts";
import type { RunRequest } from "../../src/api/schemas.ts";
import { createEngine } from "../../src/engine/mod.ts";
import { newMessages } from "../../src/store/mod.ts";
import { addTool, call, clientTools, describe, Harness, only, say, user } from "./fakes.ts";

Deno.test("a text run streams one assistant message and completes with its text", async () => {
  await using h = await Harness.create({ turns: [say("Hello there friend")] });
  const out = await h.run({ session_id: "s1", messages: [user("hi")] });
  assert.deepEqual(out.kinds, [
    "run_started",
    "messages_snapshot",
    "step_started",
    "text_message_start",
    "text_message_content",
    "text_message_content",
    "text_message_content",
    "text_message_end",
    "step_finished",
    "run_finished",
  ]);
  assert.deepEqual(out.finished.result, { text: "Hello there friend", context: null });
  assert.equal(out.finished.status, "completed");
  assert.equal(out.finished.interrupt_payload, null);

  const snapshot = only(out.events, "messages_snapshot")[0];
  assert.deepEqual(describe(snapshot.messages), ["user:hi"]);
  const start = only(out.events, "text_message_start")[0];

  const messages = await h.store.allMessages(h.tenant, "s1");
  assert.deepEqual(describe(messages), ["user:hi", "assistant:Hello there friend"]);
  // Input messages and the answer belong to the run; the answer has the streamed id.
  assert.ok(messages.every((m) => m.run_id === out.run_id));
  assert.equal(messages[1].message_id, start.message_id);

  const run = await h.store.getRun(h.tenant, out.run_id);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.equal(run?.checkpoint_id, cp?.checkpoint_id);
  assert.equal(cp?.parent_id, null);
  assert.equal(cp?.state.step, 1);
  assert.deepEqual(describe(cp!.state.messages), ["user:hi", "assistant:Hello there friend"]);
  assert.deepEqual(h.model.requests[0].tools, []);
});

Deno.test("a tool call runs the tool and the model answers with its result", async () => {
  const add = addTool();
  await using h = await Harness.create({
    tools: [add],
    turns: [call({ id: "c1", name: "add", args: { a: 2, b: 3 } }), say("It is 5")],
  });
  const out = await h.run({ session_id: "s1", messages: [user("2+3?")] });
  assert.deepEqual(out.kinds, [
    "run_started",
    "messages_snapshot",
    "step_started",
    "tool_call_start",
    "tool_call_args",
    "tool_call_args",
    "tool_call_end",
    "step_finished",
    "step_started",
    "tool_call_result",
    "step_finished",
    "step_started",
    "text_message_start",
    "text_message_content",
    "text_message_content",
    "text_message_content",
    "text_message_end",
    "step_finished",
    "run_finished",
  ]);
  const steps = only(out.events, "step_started").map((e) => `${e.step}:${e.step_name}`);
  assert.deepEqual(steps, ["1:model", "2:tools", "3:model"]);
  const args = only(out.events, "tool_call_args").map((e) => e.delta).join("");
  assert.deepEqual(JSON.parse(args), { a: 2, b: 3 });
  assert.deepEqual(add.calls[0].args, { a: 2, b: 3 });
  assert.equal(add.calls[0].ctx.tool_call_id, "c1");

  const result = only(out.events, "tool_call_result")[0];
  assert.deepEqual(
    { id: result.tool_call_id, content: result.content, err: result.is_error },
    { id: "c1", content: 5, err: false },
  );
  // The tool call hangs off the assistant message that made it.
  const messages = await h.store.allMessages(h.tenant, "s1");
  const assistant = messages.find((m) => m.role === "assistant")!;
  assert.equal(only(out.events, "tool_call_start")[0].parent_message_id, assistant.message_id);
  assert.deepEqual(describe(messages), [
    "user:2+3?",
    "assistant: calls=add#c1",
    "tool:5",
    "assistant:It is 5",
  ]);
  assert.equal(messages[2].tool_call_id, "c1");
  assert.equal(messages[2].message_id, result.message_id);
  // The second model step sees the call and its result.
  assert.deepEqual(describe(h.model.requests[1].messages), describe(messages.slice(0, 3)));
  assert.deepEqual(h.model.requests[0].tools.map((t) => t.name), ["add"]);
  assert.deepEqual(out.finished.result, { text: "It is 5", context: null });

  // Three steps, three checkpoints in one chain.
  const page = await h.store.listCheckpoints(h.tenant, "s1", { per_page: 10 });
  assert.equal(page.count, 3);
  const byId = new Map(page.items.map((c) => [c.checkpoint_id, c]));
  let cp = await h.store.latestCheckpoint(h.tenant, "s1");
  const chain: number[] = [];
  while (cp) {
    chain.push(cp.state.step);
    cp = cp.parent_id ? byId.get(cp.parent_id)! : null;
  }
  assert.deepEqual(chain, [3, 2, 1]);
});

Deno.test("a model calling an unknown tool gets an error result and goes on", async () => {
  await using h = await Harness.create({ turns: [call({ id: "c1", name: "nope" }), say("sorry")] });
  const out = await h.run({ session_id: "s1" });
  assert.equal(out.finished.status, "completed");
  const r = only(out.events, "tool_call_result")[0];
  assert.deepEqual([r.is_error, r.content], [true, {
    error: "the tool 'nope' is not available",
  }]);
});

Deno.test("max_steps interrupts the run; a new run continues from there", async () => {
  const add = addTool();
  await using h = await Harness.create({
    tools: [add],
    agent: { max_steps: 2 },
    turns: [
      call({ id: "c1", name: "add", args: { a: 1, b: 1 } }),
      call({ id: "c2", name: "add", args: { a: 2, b: 2 } }),
      say("finally"),
    ],
  });
  const out = await h.run({ session_id: "s1" });
  assert.equal(out.finished.status, "interrupted");
  assert.deepEqual(out.finished.interrupt_payload, { reason: "max_steps", max_steps: 2 });
  assert.equal(add.calls.length, 2);
  assert.equal(only(out.events, "step_started").filter((s) => s.step_name === "model").length, 2);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.equal(cp?.state.step, 4);
  assert.deepEqual(cp?.state.pending_tool_calls, []);

  const next = await h.run({ session_id: "s1", messages: [user("go on")] });
  assert.equal(next.finished.status, "completed");
  assert.deepEqual(only(next.events, "step_started").map((s) => s.step), [5]);
});

/**
 * Attempt 2 of run `run_id` in session s1, executed to its end: attempt 1 (lost) committed its
 * first step with `done` (inputs for `newMessages`), then its replica was lost and the run
 * claimed. `tools` are the run's client tools.
 */
async function resumedAttempt(
  h: Harness,
  run_id: string,
  done: Parameters<typeof newMessages>[1],
  tools: RunRequest["tools"] = null,
): Promise<RunEvent[]> {
  const engine = createEngine(h.deps);
  const ids = { tenant_id: h.tenant, session_id: "s1", run_id };
  const first = { session_id: "s1", run_id, messages: [user("hi")], tools } as RunRequest;
  const plan = await engine.prepare(ids, first);
  await h.store.createRun(h.tenant, {
    run_id,
    session_id: "s1",
    parent_checkpoint_id: null,
    owner: "lost",
    ...plan.begin,
  });
  await h.store.commitStep({
    tenant_id: h.tenant,
    session_id: "s1",
    run_id,
    attempt: 1,
    messages: newMessages("s1", done, run_id, Date.now()),
    checkpoint: {
      checkpoint_id: `cp-${run_id}`,
      parent_id: null,
      state: { context: null, pending_tool_calls: [], step: 2 },
    },
  });
  const { resumed } = await h.store.claimLostRuns("b", Date.now() + 60_000, 1_000, 3, 10);
  assert.equal(resumed[0].attempt, 2);
  const again = { session_id: "s1", run_id, messages: [], checkpoint_id: null, tools };
  const events: RunEvent[] = [];
  const resumedPlan = await engine.prepare(ids, again as RunRequest);
  for await (
    const e of engine.execute(resumedPlan, ids, new AbortController().signal, { attempt: 2 })
  ) {
    events.push(e);
  }
  assert.equal(events[0].kind, "run_resumed");
  return events;
}

Deno.test("a resumed attempt counts the run's earlier model steps toward max_steps", async () => {
  const add = addTool();
  await using h = await Harness.create({
    tools: [add],
    agent: { max_steps: 1 },
    turns: [say("one step too many")],
  });
  // The lost attempt's model step (a call) and the call's result were committed.
  const events = await resumedAttempt(h, "r-resumed", [
    {
      role: "assistant",
      content: [],
      tool_calls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }],
    },
    { role: "tool", tool_call_id: "c1", content: [{ type: "data", value: { sum: 3 } }] },
  ]);
  const finished = events.at(-1) as RunEventOf<"run_finished">;
  assert.equal(finished.status, "interrupted");
  assert.deepEqual(finished.interrupt_payload, { reason: "max_steps", max_steps: 1 });
  assert.equal(h.model.requests.length, 0, "the step limit was reached before the model ran");
});

Deno.test("a client call the lost attempt left pending waits for the client again", async () => {
  const add = addTool();
  await using h = await Harness.create({ tools: [add], turns: [say("never asked")] });
  // The lost attempt's model step called a client tool and a server tool, then the replica was
  // lost while the server tool ran: neither has a result.
  const events = await resumedAttempt(h, "r-pending", [{
    role: "assistant",
    content: [],
    tool_calls: [
      { id: "c1", name: "confirm", arguments: { q: "ok?" } },
      { id: "c2", name: "add", arguments: { a: 1, b: 2 } },
    ],
  }], clientTools);
  const finished = events.at(-1) as RunEventOf<"run_finished">;
  const pending = [
    { tool_call_id: "c1", tool_name: "confirm", arguments: { q: "ok?" }, kind: "client_tool" },
  ];
  assert.equal(finished.status, "interrupted");
  assert.deepEqual(finished.interrupt_payload, { reason: "tool_calls", pending });
  // The server call, not idempotent, gets the error result; the client call none.
  const results = only(events, "tool_call_result");
  assert.deepEqual(results.map((r) => [r.tool_call_id, r.is_error]), [["c2", true]]);
  assert.match(JSON.stringify(results[0].content), /interrupted: it may or may not have run/);
  assert.equal(add.calls.length, 0);
  assert.equal(h.model.requests.length, 0, "the model waits for the client too");
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(cp?.state.pending_tool_calls, pending);
});
