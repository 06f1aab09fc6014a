import assert from "node:assert/strict";
import type { RunEvent } from "../../src/api/events.ts";
import { prepareRun } from "../../src/engine/prepare.ts";
import { withLogContext } from "../../src/log.ts";
import type { Tool } from "../../src/tools/types.ts";
import {
  addTool,
  call,
  describe,
  FakeTool,
  Harness,
  ModelError,
  say,
  sleep,
  user,
} from "./fakes.ts";
import { assertError } from "../_kit/mod.ts";

type Of<K extends RunEvent["kind"]> = Extract<RunEvent, { kind: K }>;
const only = <K extends RunEvent["kind"]>(events: RunEvent[], kind: K) =>
  events.filter((e): e is Of<K> => e.kind === kind);

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

Deno.test("a tool's emits arrive live as custom events before its result", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const progress = new FakeTool("progress", async (_args, ctx) => {
    ctx.emit("progress", { pct: 10 });
    // The tool only finishes after the test saw the first emit: proof that emits are live.
    await released;
    ctx.emit("progress", { pct: 100 });
    return { result: "done", is_error: false };
  });
  await using h = await Harness.create({
    tools: [progress],
    turns: [call({ id: "c1", name: "progress" }), say("ok")],
  });
  const out = await h.run({ session_id: "s1" }, {
    onEvent: (e) => {
      if (e.kind === "custom") release();
    },
  });
  const tail = out.kinds.slice(out.kinds.indexOf("step_started", 3));
  assert.deepEqual(tail.slice(0, 5), [
    "step_started",
    "custom",
    "custom",
    "tool_call_result",
    "step_finished",
  ]);
  assert.deepEqual(only(out.events, "custom").map((e) => [e.name, e.value]), [
    ["progress", { pct: 10 }],
    ["progress", { pct: 100 }],
  ]);
  assert.equal(out.finished.status, "completed");
  // Emits are not persisted.
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=progress#c1",
    'tool:"done"',
    "assistant:ok",
  ]);
});

Deno.test("state updates: a patch gives a state_delta, a whole context a computed delta", async () => {
  const bump = new FakeTool("bump", (_args, ctx) =>
    Promise.resolve({
      result: "bumped",
      is_error: false,
      state: { patch: [{ op: "replace", path: "/count", value: Number(ctx.context?.count) + 1 }] },
    }));
  const reset = new FakeTool("reset", () =>
    Promise.resolve({
      result: "reset",
      is_error: false,
      state: { context: { count: 0, note: "reset" } },
    }));
  const broken = new FakeTool("broken", () =>
    Promise.resolve({
      result: "x",
      is_error: false,
      state: { patch: [{ op: "remove", path: "/missing" }] },
    }));
  await using h = await Harness.create({
    tools: [bump, reset, broken],
    turns: [
      call({ id: "c1", name: "bump" }),
      call({ id: "c2", name: "reset" }, { id: "c3", name: "broken" }),
      say("done"),
    ],
  });
  const out = await h.run({ session_id: "s1", context: { count: 1 } });
  assert.deepEqual(out.kinds.slice(0, 3), ["run_started", "messages_snapshot", "state_snapshot"]);
  assert.deepEqual(only(out.events, "state_snapshot")[0].context, { count: 1 });
  assert.deepEqual(only(out.events, "state_delta").map((e) => e.delta), [
    [{ op: "replace", path: "/count", value: 2 }],
    [{ op: "replace", path: "/count", value: 0 }, { op: "add", path: "/note", value: "reset" }],
  ]);
  // The delta follows the tool's result.
  const i = out.kinds.indexOf("state_delta");
  assert.equal(out.kinds[i - 1], "tool_call_result");
  // A patch that does not apply fails the call, not the run, and leaves the context alone.
  const failed = only(out.events, "tool_call_result").find((e) => e.tool_call_id === "c3")!;
  assert.equal(failed.is_error, true);
  assert.match(JSON.stringify(failed.content), /state update could not be applied/);

  const finalContext = { count: 0, note: "reset" };
  assert.deepEqual(out.finished.result, { text: "done", context: finalContext });
  // The tools step's checkpoint holds the new context.
  const page = await h.store.listCheckpoints(h.tenant, "s1", { per_page: 10 });
  const afterBump = page.items.find((c) => c.state.step === 2)!;
  assert.deepEqual(afterBump.state.context, { count: 2 });
  const last = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(last?.state.context, finalContext);
  // The tool saw the context of the time of its call.
  assert.deepEqual(bump.calls[0].ctx.context, { count: 1 });

  // The next run starts from the checkpoint's context.
  h.model.turns.push(say("again"));
  const next = await h.run({ session_id: "s1" });
  assert.deepEqual(only(next.events, "state_snapshot")[0].context, finalContext);
});

Deno.test("the first state update of a session without context: empty snapshot, then delta", async () => {
  const set = new FakeTool("set", () =>
    Promise.resolve({
      result: null,
      is_error: false,
      state: { patch: [{ op: "add", path: "/x", value: 1 }] },
    }));
  await using h = await Harness.create({
    tools: [set],
    turns: [call({ id: "c1", name: "set" }), say("k")],
  });
  const out = await h.run({ session_id: "s1" });
  assert.deepEqual(only(out.events, "state_snapshot").map((e) => e.context), [{}]);
  assert.deepEqual(only(out.events, "state_delta").map((e) => e.delta), [
    [{ op: "add", path: "/x", value: 1 }],
  ]);
  // Both follow the tool's result, in time too.
  const i = out.kinds.indexOf("state_snapshot");
  assert.deepEqual(out.kinds.slice(i - 1, i + 2), [
    "tool_call_result",
    "state_snapshot",
    "state_delta",
  ]);
  for (let k = 1; k < out.events.length; k++) {
    assert.ok(out.events[k].timestamp >= out.events[k - 1].timestamp, `event ${k} in order`);
  }
  assert.deepEqual(out.finished.result, { text: "k", context: { x: 1 } });
});

const clientTools = [
  { name: "get_location", description: "where the user is", parameters: { type: "object" } },
  { name: "confirm", description: "ask the user", parameters: { type: "object" } },
];

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

Deno.test("capabilities: inherit, extend, replace, unknown names and the tool set", async () => {
  await using h = await Harness.create({
    tools: [
      addTool(),
      new FakeTool("search", () => Promise.resolve({ result: [], is_error: false })),
    ],
    agent: { instructions: "Be brief.", capabilities: ["math"] },
    capability: {
      math: { tools: ["add"], instructions: "Use add for sums." },
      web: { tools: ["search"], instructions: "Search when unsure." },
    },
  });
  const names = (p: ReturnType<typeof prepareRun>) => p.model_tools.map((t) => t.name);
  const base = { messages: [user("x")] };
  const inherit = prepareRun(h.deps, { ...base, capability_override: { strategy: "inherit" } });
  assert.deepEqual(inherit.capabilities, ["math"]);
  assert.deepEqual(names(inherit), ["add"]);
  assert.equal(inherit.system, "Be brief.\n\n## Capability: math\nUse add for sums.");
  assert.deepEqual(names(prepareRun(h.deps, base)), ["add"]);

  const extend = prepareRun(h.deps, {
    ...base,
    capability_override: { strategy: "extend", capabilities: ["web", "math"] },
  });
  assert.deepEqual(extend.capabilities, ["math", "web"]);
  assert.deepEqual(names(extend), ["add", "search"]);
  assert.match(extend.system, /## Capability: web\nSearch when unsure\./);

  const replace = prepareRun(h.deps, {
    ...base,
    capability_override: { strategy: "replace", capabilities: ["web"] },
    context_vars: [{ description: "user name", value: "Ada" }],
    tools: [{ name: "pick", description: "client side", parameters: {} }],
  });
  assert.deepEqual(names(replace), ["search", "pick"]);
  assert.equal(
    replace.system,
    "Be brief.\n\n## Capability: web\nSearch when unsure.\n\n## Context\n- user name: Ada",
  );

  const unknown = await assertError(() =>
    prepareRun(h.deps, {
      ...base,
      capability_override: { strategy: "extend", capabilities: ["web", "nope"] },
    }), 422000);
  assert.equal(unknown.fields?.[0].field, "capability_override.capabilities.1");
  assert.equal(unknown.fields?.[0].errors[0].code, "unknown_capability");

  // A client tool may not take a server tool's name, even one of an inactive capability.
  const clash = await assertError(() =>
    prepareRun(h.deps, {
      ...base,
      tools: [
        { name: "ok", description: "", parameters: {} },
        { name: "search", description: "", parameters: {} },
      ],
    }), 422000);
  assert.deepEqual(clash.fields?.map((f) => [f.field, f.errors[0].code]), [
    ["tools.1.name", "tool_name_conflict"],
  ]);
  // The model seam's 422 passes through.
  await assertError(
    () => prepareRun(h.deps, { ...base, model: { override: { model: "unknown" } } }),
    422000,
  );

  // Without any capability in the manifest every tool is available.
  await using open = await Harness.create({ tools: [addTool()], agent: { instructions: "" } });
  const p = prepareRun(open.deps, { messages: [user("x")] });
  assert.deepEqual(p.model_tools.map((t) => t.name), ["add"]);
  assert.deepEqual(p.capabilities, []);
  assert.equal(p.system, "");
});

Deno.test("a fork from an earlier checkpoint continues that branch; the old one stays readable", async () => {
  await using h = await Harness.create({
    turns: [say("A"), say("B"), say("C")],
  });
  const r1 = await h.run({ session_id: "s1", messages: [user("a")] });
  const cp1 = (await h.store.getRun(h.tenant, r1.run_id))!.checkpoint_id!;
  const r2 = await h.run({ session_id: "s1", messages: [user("b")] });
  const cp2 = (await h.store.getRun(h.tenant, r2.run_id))!.checkpoint_id!;
  assert.deepEqual(await h.transcript("s1"), ["user:a", "assistant:A", "user:b", "assistant:B"]);

  const r3 = await h.run({ session_id: "s1", checkpoint_id: cp1, messages: [user("c")] });
  assert.equal(r3.finished.status, "completed");
  assert.deepEqual(describe(h.model.requests[2].messages), ["user:a", "assistant:A", "user:c"]);
  assert.deepEqual(await h.transcript("s1"), ["user:a", "assistant:A", "user:c", "assistant:C"]);

  const run3 = await h.store.getRun(h.tenant, r3.run_id);
  assert.equal(run3?.parent_checkpoint_id, cp1);
  const cp3 = await h.store.getCheckpoint(h.tenant, "s1", run3!.checkpoint_id!);
  assert.equal(cp3?.parent_id, cp1);
  // The abandoned branch is still there.
  const old = await h.store.getCheckpoint(h.tenant, "s1", cp2);
  assert.deepEqual(describe(old!.state.messages), [
    "user:a",
    "assistant:A",
    "user:b",
    "assistant:B",
  ]);
  const all = await h.store.listCheckpoints(h.tenant, "s1", { per_page: 10 });
  assert.equal(all.count, 3);

  const [first] = await h.store.allMessages(h.tenant, "s1");
  await assertError(
    () =>
      h.run({ session_id: "s1", messages: [{ ...user("again"), message_id: first.message_id }] }),
    409005,
  );
  await assertError(() => h.run({ session_id: "s1", checkpoint_id: "nope" }), 404004);
});

Deno.test("messages added or deleted between runs are what the next run sees", async () => {
  await using h = await Harness.create({ turns: [say("one"), say("two")] });
  await h.run({ session_id: "s1", messages: [user("first")] });
  const [, answer] = await h.store.allMessages(h.tenant, "s1");
  assert.equal(await h.store.deleteMessage(h.tenant, "s1", answer.message_id), true);
  await h.store.appendMessages(h.tenant, "s1", [{
    role: "assistant",
    content: [{ type: "text", value: "edited" }],
  }]);
  await h.run({ session_id: "s1", messages: [user("second")] });
  assert.deepEqual(describe(h.model.requests[1].messages), [
    "user:first",
    "assistant:edited",
    "user:second",
  ]);
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

Deno.test("a ModelError fails the run with its payload; partial text is kept", async () => {
  const err = new ModelError("rate_limited", "slow down", "fake", "fake-1", 3);
  await using h = await Harness.create({
    turns: [{ open_error: err }, [{ type: "text-delta", delta: "Half an " }, { fail: err }]],
  });
  const a = await h.run({ session_id: "s1", messages: [user("q1")] });
  assert.deepEqual(a.kinds, [
    "run_started",
    "messages_snapshot",
    "step_started",
    "step_finished",
    "run_finished",
  ]);
  assert.equal(a.finished.status, "failed");
  assert.deepEqual(a.finished.error, {
    code: "rate_limited",
    message: "slow down",
    provider: "fake",
    model: "fake-1",
    attempts: 3,
  });
  assert.equal(a.finished.result, null);

  const b = await h.run({ session_id: "s1", messages: [user("q2")] });
  assert.equal(b.finished.status, "failed");
  assert.deepEqual(b.kinds.slice(-4), [
    "text_message_content",
    "text_message_end",
    "step_finished",
    "run_finished",
  ]);
  assert.deepEqual(await h.transcript("s1"), ["user:q1", "user:q2", "assistant:Half an "]);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(describe(cp!.state.messages), ["user:q1", "user:q2", "assistant:Half an "]);
});

Deno.test("an unexpected error fails the run with internal_error, logged with its ids", async () => {
  await using h = await Harness.create({ turns: [] });
  const out = await withLogContext(
    { request_id: "req-9" },
    () => h.run({ session_id: "s1", run_id: "r-internal" }),
  );
  assert.equal(out.finished.status, "failed");
  assert.deepEqual(out.finished.error, {
    code: "internal_error",
    message: "the run failed with an internal error",
  });
  const lines = h.logs.map((l) => JSON.parse(l));
  const line = lines.find((l) => l.msg === "run failed with an internal error");
  assert.ok(line, h.logs.join("\n"));
  assert.equal(line.level, "error");
  assert.deepEqual(
    [line.request_id, line.tenant, line.run_id, line.session_id],
    ["req-9", h.tenant, "r-internal", "s1"],
  );
  assert.match(line.error, /the script has no more turns/);
});

Deno.test("a tool that throws is an error result, logged scrubbed with the tool's name", async () => {
  const secret = "sk-test-0123456789abcdefghij";
  const broken: Tool = {
    name: "broken",
    description: "breaks its contract",
    parameters: { type: "object" },
    requires_approval: false,
    call: () => Promise.reject(new Error(`upstream refused key ${secret} (custom-secret-value)`)),
  };
  await using h = await Harness.create({
    turns: [call({ id: "c1", name: "broken" }), say("sorry")],
    tools: [broken],
    secrets: ["custom-secret-value"],
  });
  const out = await h.run({ session_id: "s1", run_id: "r-tool" });
  assert.equal(out.finished.status, "completed");
  const r = only(out.events, "tool_call_result")[0];
  assert.deepEqual([r.is_error, r.content], [true, {
    error: "the tool 'broken' failed unexpectedly",
  }]);
  const line = h.logs.map((l) => JSON.parse(l)).find((l) => l.tool === "broken");
  assert.ok(line, h.logs.join("\n"));
  assert.equal(line.level, "error");
  assert.deepEqual([line.tool_call_id, line.run_id, line.tenant], ["c1", "r-tool", h.tenant]);
  assert.match(line.error, /upstream refused key/);
  assert.ok(!h.logs.join("\n").includes(secret), "a provider key shape is masked");
  assert.ok(!h.logs.join("\n").includes("custom-secret-value"), "configured secrets too");
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

Deno.test("cancellation mid-stream: cancelled promptly, partial text and a checkpoint kept", async () => {
  await using h = await Harness.create({
    turns: [[
      { type: "text-delta", delta: "Once upon " },
      { wait: 10_000 },
      { type: "text-delta", delta: "a time" },
    ]],
  });
  const controller = new AbortController();
  const began = performance.now();
  const out = await h.run({ session_id: "s1" }, {
    signal: controller.signal,
    onEvent: (e) => {
      if (e.kind === "text_message_content") controller.abort(new Error("cancelled"));
    },
  });
  assert.ok(performance.now() - began < 2_000, "stops promptly");
  assert.equal(out.finished.status, "cancelled");
  assert.equal(out.finished.error, null);
  assert.deepEqual(out.kinds.slice(-3), ["text_message_end", "step_finished", "run_finished"]);
  assert.deepEqual(await h.transcript("s1"), ["user:hi", "assistant:Once upon "]);
  const run = await h.store.getRun(h.tenant, out.run_id);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.equal(run?.checkpoint_id, cp?.checkpoint_id);
  assert.deepEqual(describe(cp!.state.messages), ["user:hi", "assistant:Once upon "]);
});

Deno.test("cancellation during a tool: the tool gets the signal; the next run closes its call", async () => {
  const controller = new AbortController();
  const slow = new FakeTool("slow", async (_args, ctx) => {
    // The run is cancelled while its tool runs.
    controller.abort();
    await sleep(10_000, ctx.signal).catch(() => {});
    return { result: "late", is_error: false };
  });
  await using h = await Harness.create({
    tools: [slow],
    turns: [call({ id: "c1", name: "slow" }), say("moving on")],
  });
  const out = await h.run({ session_id: "s1" }, { signal: controller.signal });
  assert.equal(out.finished.status, "cancelled");
  assert.equal(slow.calls[0].ctx.signal.aborted, true);
  assert.equal(out.kinds.includes("tool_call_result"), false);
  assert.deepEqual(out.kinds.slice(-2), ["step_finished", "run_finished"]);

  const next = await h.run({ session_id: "s1", messages: [user("again")] });
  assert.equal(next.finished.status, "completed");
  assert.deepEqual(await h.transcript("s1"), [
    "user:hi",
    "assistant: calls=slow#c1",
    'tool:{"error":"the run that made this call ended before it"}',
    "user:again",
    "assistant:moving on",
  ]);
});
