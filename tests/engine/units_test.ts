import assert from "node:assert/strict";
import { applyStateUpdate } from "../../src/engine/state.ts";
import { RunCancelled, withPushes } from "../../src/engine/async.ts";
import { answerPending } from "../../src/engine/start.ts";
import { unansweredToolCalls } from "../../src/engine/conversation.ts";
import type { Message } from "../../src/api/schemas.ts";

Deno.test("applyStateUpdate: empty snapshot then delta from null, delta, no-op, bad patch", () => {
  const fromNull = applyStateUpdate(null, { context: { a: 1 } });
  assert.deepEqual(fromNull.context, { a: 1 });
  const first = fromNull.events();
  assert.deepEqual(first.map((e) => e.kind), ["state_snapshot", "state_delta"]);
  assert.deepEqual(first[0].kind === "state_snapshot" && first[0].context, {});
  assert.deepEqual(first[1].kind === "state_delta" && first[1].delta, [
    { op: "add", path: "/a", value: 1 },
  ]);
  const patchedNull = applyStateUpdate(null, { patch: [{ op: "add", path: "/n", value: 2 }] });
  assert.deepEqual(patchedNull.events().map((e) => e.kind), ["state_snapshot", "state_delta"]);

  const whole = applyStateUpdate({ a: 1, b: 2 }, { context: { a: 1, c: 3 } });
  const delta = whole.events()[0];
  assert.equal(delta.kind, "state_delta");
  assert.deepEqual(delta.kind === "state_delta" && delta.delta, [
    { op: "remove", path: "/b" },
    { op: "add", path: "/c", value: 3 },
  ]);
  assert.deepEqual(applyStateUpdate({ a: 1 }, { context: { a: 1 } }).events(), []);

  const before = { list: [1] };
  const patched = applyStateUpdate(before, { patch: [{ op: "add", path: "/list/-", value: 2 }] });
  assert.deepEqual(patched.context, { list: [1, 2] });
  assert.deepEqual(before, { list: [1] }, "the previous context is not mutated");

  assert.throws(() => applyStateUpdate({}, { patch: [{ op: "remove", path: "/x" }] }));
  assert.throws(() => applyStateUpdate({}, { patch: [{ op: "replace", path: "", value: 3 }] }));
});

Deno.test("withPushes: yields pushes in order, drops late ones, returns the value", async () => {
  let late!: (n: number) => void;
  const gen = withPushes<number, string>(async (push) => {
    push(1);
    await Promise.resolve();
    push(2);
    late = push;
    return "v";
  }, new AbortController().signal);
  const seen: number[] = [];
  let r = await gen.next();
  while (!r.done) {
    seen.push(r.value);
    r = await gen.next();
  }
  late(3);
  assert.deepEqual(seen, [1, 2]);
  assert.equal(r.value, "v");
});

Deno.test("withPushes: an abort ends it with RunCancelled while the task still runs", async () => {
  const controller = new AbortController();
  let stop!: () => void;
  const gen = withPushes<number, void>(
    () => new Promise<void>((resolve) => stop = resolve),
    controller.signal,
  );
  const next = gen.next();
  controller.abort();
  await assert.rejects(next, RunCancelled);
  stop();
});

Deno.test("answerPending pairs answers and reports every problem at once", () => {
  const pending = [
    { tool_call_id: "a", tool_name: "x", arguments: {}, kind: "client_tool" as const },
    { tool_call_id: "b", tool_name: "y", arguments: {}, kind: "approval" as const },
  ];
  const ok = answerPending(pending, {
    tool_results: [{ tool_call_id: "a", result: 1, is_error: true }],
    approvals: [{ tool_call_id: "b", approved: false }],
  }, []);
  assert.deepEqual(ok.map((p) => p.answer), [
    { kind: "result", result: 1, is_error: true },
    { kind: "rejected", reason: undefined },
  ]);
  assert.deepEqual(answerPending(pending, null, []).map((p) => p.answer.kind), [
    "unanswered",
    "unanswered",
  ]);
  try {
    answerPending(pending, {
      tool_results: [{ tool_call_id: "a", result: 1 }, { tool_call_id: "a", result: 2 }],
    }, []);
    assert.fail("expected a 422");
  } catch (error) {
    const fields = (error as { fields: { field: string; errors: { code: string }[] }[] }).fields;
    assert.deepEqual(fields.map((f) => [f.field, f.errors[0].code]), [
      ["resume_payload.tool_results.1.tool_call_id", "duplicate_answer"],
      ["resume_payload", "missing_tool_result"],
    ]);
  }
});

Deno.test("unansweredToolCalls finds calls without a tool message", () => {
  const m = (role: Message["role"], extra: Partial<Message> = {}): Message => ({
    message_id: crypto.randomUUID(),
    session_id: "s",
    run_id: null,
    role,
    content: [],
    created_at: "",
    ...extra,
  });
  const calls = unansweredToolCalls([
    m("assistant", {
      tool_calls: [{ id: "1", name: "a", arguments: {} }, { id: "2", name: "b", arguments: {} }],
    }),
    m("tool", { tool_call_id: "1" }),
  ]);
  assert.deepEqual(calls.map((c) => c.id), ["2"]);
});
