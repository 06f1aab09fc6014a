/**
 * Interrupts and resumes: client tool calls and approvals stop a run; the next run answers them
 * (a `resume_payload`, or a tool message among its messages), is refused before it exists when the
 * answers do not fit, or closes them as unanswered when it does not resume.
 */
import assert from "node:assert/strict";
import { EngineError } from "../../src/engine/mod.ts";
import { assertError } from "../_kit/mod.ts";
import { call, clientTools, describe, FakeTool, Harness, only, say, user } from "./fakes.ts";

Deno.test("two client tool calls interrupt the run; a resume with both results completes", async () => {
  await using h = await Harness.create({
    turns: [
      call({ id: "c1", name: "get_location" }, { id: "c2", name: "confirm", args: { q: "ok?" } }),
      say("You are in Paris"),
    ],
  });
  const first = await h.run({ session_id: "s1", tools: clientTools });
  assert.equal(first.finished.status, "interrupted");
  assert.deepEqual(first.finished.interrupt_payload, {
    reason: "tool_calls",
    pending: [
      { tool_call_id: "c1", tool_name: "get_location", arguments: {}, kind: "client_tool" },
      { tool_call_id: "c2", tool_name: "confirm", arguments: { q: "ok?" }, kind: "client_tool" },
    ],
  });
  assert.equal(first.kinds.includes("tool_call_result"), false);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(cp?.state.pending_tool_calls.map((p) => p.tool_call_id), ["c1", "c2"]);

  const second = await h.run({
    session_id: "s1",
    tools: clientTools,
    messages: [user("here you go")],
    resume_payload: {
      tool_results: [
        { tool_call_id: "c2", result: { confirmed: true } },
        { tool_call_id: "c1", result: "Paris" },
      ],
    },
  });
  assert.equal(second.finished.status, "completed");
  assert.deepEqual(second.finished.result, { text: "You are in Paris", context: null });
  // The results are written first, in the calls' order, then the input, then the model runs.
  assert.deepEqual(second.kinds.slice(0, 6), [
    "run_started",
    "step_started",
    "tool_call_result",
    "tool_call_result",
    "step_finished",
    "messages_snapshot",
  ]);
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=get_location#c1,confirm#c2",
    'tool:"Paris"',
    'tool:{"confirmed":true}',
    "user:here you go",
    "assistant:You are in Paris",
  ]);
  assert.deepEqual(describe(h.model.requests[1].messages).slice(2), [
    'tool:"Paris"',
    'tool:{"confirmed":true}',
    "user:here you go",
  ]);
  // The resumed run hangs off the interrupted run's checkpoint.
  const run = await h.store.getRun(h.tenant, second.run_id);
  assert.equal(run?.parent_checkpoint_id, cp?.checkpoint_id);
  const latest = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(latest?.state.pending_tool_calls, []);
});

Deno.test("a client result may come as a tool message of the run's messages", async () => {
  await using h = await Harness.create({
    turns: [call({ id: "c1", name: "get_location" }), say("Paris it is")],
  });
  await h.run({ session_id: "s1", tools: clientTools });
  const out = await h.run({
    session_id: "s1",
    tools: clientTools,
    messages: [{ role: "tool", tool_call_id: "c1", content: [{ type: "data", value: "Paris" }] }],
  });
  assert.equal(out.finished.status, "completed");
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=get_location#c1",
    'tool:"Paris"',
    "assistant:Paris it is",
  ]);
});

Deno.test("approval: an approved call runs on resume, a refused one tells the model why", async () => {
  const pay = new FakeTool("pay", () => Promise.resolve({ result: "paid", is_error: false }), true);
  await using h = await Harness.create({
    tools: [pay],
    turns: [
      call({ id: "p1", name: "pay", args: { amount: 5 } }),
      say("Paid."),
      call({ id: "p2", name: "pay", args: { amount: 500 } }),
      say("Not paid."),
    ],
  });
  const asked = await h.run({ session_id: "s1" });
  assert.equal(asked.finished.status, "interrupted");
  assert.deepEqual(asked.finished.interrupt_payload, {
    reason: "tool_calls",
    pending: [{
      tool_call_id: "p1",
      tool_name: "pay",
      arguments: { amount: 5 },
      kind: "approval",
    }],
  });
  assert.equal(pay.calls.length, 0);

  const approved = await h.run({
    session_id: "s1",
    resume_payload: { approvals: [{ tool_call_id: "p1", approved: true }] },
  });
  assert.equal(approved.finished.status, "completed");
  assert.equal(pay.calls.length, 1);
  assert.deepEqual(pay.calls[0].args, { amount: 5 });
  const paid = only(approved.events, "tool_call_result")[0];
  assert.deepEqual([paid.tool_call_id, paid.content, paid.is_error], ["p1", "paid", false]);

  const asked2 = await h.run({ session_id: "s1", messages: [user("pay 500")] });
  assert.equal(asked2.finished.status, "interrupted");
  const refused = await h.run({
    session_id: "s1",
    resume_payload: { approvals: [{ tool_call_id: "p2", approved: false, reason: "too much" }] },
  });
  assert.equal(refused.finished.status, "completed");
  assert.equal(pay.calls.length, 1);
  const no = only(refused.events, "tool_call_result")[0];
  assert.equal(no.is_error, true);
  assert.deepEqual(no.content, { error: "the user rejected this tool call", reason: "too much" });
  const transcript = await h.transcript("s1");
  assert.ok(
    transcript.includes('tool:{"error":"the user rejected this tool call","reason":"too much"}'),
  );
  assert.equal(transcript.at(-1), "assistant:Not paid.");
});

Deno.test("resume validation: 422 before the run exists", async () => {
  await using h = await Harness.create({
    turns: [call({ id: "c1", name: "get_location" }, { id: "c2", name: "confirm" })],
  });
  const nothing = await assertError(
    () => h.run({ session_id: "s1", resume_payload: { tool_results: [] } }),
    422000,
    { thrown: EngineError },
  );
  assert.deepEqual(nothing.fields?.map((f) => [f.field, f.errors[0].code]), [
    ["resume_payload", "nothing_to_resume"],
  ]);
  assert.equal(await h.store.getSession(h.tenant, "s1"), null);

  await h.run({ session_id: "s1", tools: clientTools });
  const runsBefore = (await h.store.listRuns(h.tenant, "s1", {}, { per_page: 10 })).count;
  const missing = await assertError(() =>
    h.run({
      session_id: "s1",
      tools: clientTools,
      resume_payload: { tool_results: [{ tool_call_id: "c1", result: "x" }] },
    }), 422000);
  assert.deepEqual(missing.fields, [{
    field: "resume_payload",
    errors: [{
      code: "missing_tool_result",
      message: "pending tool calls without an answer: c2",
      params: { tool_call_ids: ["c2"] },
    }],
  }]);

  const wrong = await assertError(() =>
    h.run({
      session_id: "s1",
      resume_payload: {
        tool_results: [{ tool_call_id: "c1", result: 1 }, { tool_call_id: "zz", result: 2 }],
        approvals: [{ tool_call_id: "c2", approved: true }],
      },
    }), 422000);
  assert.deepEqual(wrong.fields?.map((f) => [f.field, f.errors[0].code]), [
    ["resume_payload.tool_results.1.tool_call_id", "unknown_tool_call"],
    ["resume_payload.approvals.0.tool_call_id", "unknown_tool_call"],
    ["resume_payload", "missing_tool_result"],
  ]);

  const malformed = await assertError(
    () => h.run({ session_id: "s1", resume_payload: { tool_results: [{ result: 1 }], bogus: 1 } }),
    422000,
  );
  // The rules of docs/errors.md, as for any body field (never zod's issue names).
  assert.deepEqual(malformed.fields?.map((f) => [f.field, f.errors[0].code]).sort(), [
    ["resume_payload.bogus", "unknown_field"],
    ["resume_payload.tool_results.0.tool_call_id", "required"],
  ]);
  const runsAfter = (await h.store.listRuns(h.tenant, "s1", {}, { per_page: 10 })).count;
  assert.equal(runsAfter, runsBefore);
});

Deno.test("a run that does not resume closes the pending calls with an error result", async () => {
  await using h = await Harness.create({
    turns: [call({ id: "c1", name: "get_location" }), say("Never mind then")],
  });
  await h.run({ session_id: "s1", tools: clientTools });
  const out = await h.run({ session_id: "s1", messages: [user("forget it")] });
  assert.equal(out.finished.status, "completed");
  const closed = only(out.events, "tool_call_result")[0];
  assert.equal(closed.is_error, true);
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=get_location#c1",
    'tool:{"error":"the user continued without answering this call"}',
    "user:forget it",
    "assistant:Never mind then",
  ]);
});
