/**
 * The state a run starts from (`loadStart`, `answerPending`, engine/start.ts): a fork from an
 * earlier checkpoint, the conversation as edited between runs, and how pending calls pair with
 * their answers.
 */
import assert from "node:assert/strict";
import { answerPending } from "../../src/engine/start.ts";
import { EngineError } from "../../src/engine/mod.ts";
import { assertError } from "../_kit/mod.ts";
import { describe, Harness, say, user } from "./fakes.ts";

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
    { thrown: EngineError },
  );
  await assertError(() => h.run({ session_id: "s1", checkpoint_id: "nope" }), 404004, {
    thrown: EngineError,
  });
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
