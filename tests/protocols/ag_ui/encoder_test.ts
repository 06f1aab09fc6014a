/** The AG-UI encoder as a pure mapper: internal run events in, AG-UI events out. */
import assert from "node:assert/strict";
import { makeEvent, type RunEvent, type RunStreamItem } from "../../../src/api/events.ts";
import { AgUiEncoder, agUiFrames } from "../../../src/protocols/ag_ui/encoder.ts";
import {
  checkEvent,
  checkStream,
  storedMessage as message,
  types,
  type WireEvent,
} from "./helpers.ts";
import { parseSse } from "../../_kit/mod.ts";

const S = "session-1";
const R = "run-1";

function encodeAll(events: RunEvent[], clientMessageIds: string[] = []): WireEvent[] {
  const encoder = new AgUiEncoder({ clientMessageIds });
  const out = events.flatMap((e) => encoder.encode(e)) as unknown as WireEvent[];
  for (const e of out) checkEvent(e);
  return out;
}

/** Events as a run's stream items, numbered from 1. */
async function* sequenced(events: Iterable<RunEvent>): AsyncGenerator<RunStreamItem> {
  let seq = 0;
  for (const event of events) yield { seq: ++seq, event };
}

async function frames(events: Iterable<RunEvent>): Promise<string> {
  let text = "";
  for await (const f of agUiFrames(sequenced(events))) text += f;
  return text;
}

const started = makeEvent("run_started", { session_id: S, run_id: R });
const finished = (
  over: Partial<Parameters<typeof makeEvent<"run_finished">>[1]> = {},
): RunEvent =>
  makeEvent("run_finished", {
    session_id: S,
    run_id: R,
    status: "completed",
    interrupt_payload: null,
    result: { text: "hi", context: null },
    ...over,
  });

Deno.test("a completed text run maps event by event", async () => {
  const user = message({ role: "user", content: [{ type: "text", value: "hi" }] });
  const events: RunEvent[] = [
    started,
    makeEvent("messages_snapshot", { messages: [user] }),
    makeEvent("state_snapshot", { context: { a: 1 } }),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "m1", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "m1", delta: "h" }),
    makeEvent("text_message_content", { message_id: "m1", delta: "i" }),
    makeEvent("text_message_end", { message_id: "m1" }),
    makeEvent("step_finished", { step: 1, step_name: "model" }),
    finished(),
  ];
  const out = encodeAll(events);
  assert.deepEqual(out.map((e) => e.type), [
    "RUN_STARTED",
    "MESSAGES_SNAPSHOT",
    "STATE_SNAPSHOT",
    "STEP_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "STEP_FINISHED",
    "RUN_FINISHED",
  ]);
  assert.deepEqual(out[0], {
    type: "RUN_STARTED",
    timestamp: Math.round(started.timestamp * 1000),
    threadId: S,
    runId: R,
    protocolVersion: "1.0",
  });
  assert.deepEqual(out[1].messages, [{ id: user.message_id, role: "user", content: "hi" }]);
  assert.deepEqual(out[2].snapshot, { a: 1 });
  assert.equal(out[3].stepName, "model");
  assert.equal(out[4].role, "assistant");
  const last = out.at(-1)!;
  assert.deepEqual(last.outcome, { type: "success" });
  assert.deepEqual(last.result, { text: "hi", context: null });
  assert.equal(last.threadId, S);
  checkStream(await frames(events));
});

Deno.test("tool calls, results, state deltas and custom events", () => {
  const out = encodeAll([
    started,
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("tool_call_start", { tool_call_id: "c1", tool_name: "t", parent_message_id: "m1" }),
    makeEvent("tool_call_args", { tool_call_id: "c1", delta: '{"a"' }),
    makeEvent("tool_call_args", { tool_call_id: "c1", delta: ":1}" }),
    makeEvent("tool_call_end", { tool_call_id: "c1" }),
    makeEvent("step_finished", { step: 1, step_name: "model" }),
    makeEvent("step_started", { step: 2, step_name: "tools" }),
    makeEvent("custom", { name: "progress", value: { done: 1 } }),
    makeEvent("custom", { name: "nothing", value: undefined }),
    makeEvent("tool_call_result", {
      tool_call_id: "c1",
      message_id: "t1",
      content: { ok: true },
      is_error: false,
    }),
    makeEvent("state_delta", { delta: [{ op: "add", path: "/n", value: 1 }] }),
    makeEvent("step_finished", { step: 2, step_name: "tools" }),
    finished(),
  ]);
  const start = out.find((e) => e.type === "TOOL_CALL_START")!;
  assert.deepEqual(
    { ...start, timestamp: 0 },
    {
      type: "TOOL_CALL_START",
      timestamp: 0,
      toolCallId: "c1",
      toolCallName: "t",
      parentMessageId: "m1",
    },
  );
  const customs = out.filter((e) => e.type === "CUSTOM");
  assert.deepEqual(customs.map((e) => [e.name, e.value]), [["progress", { done: 1 }], [
    "nothing",
    null,
  ]]);
  const result = out.find((e) => e.type === "TOOL_CALL_RESULT")!;
  assert.equal(result.content, '{"ok":true}');
  assert.equal(result.messageId, "t1");
  assert.equal(result.role, "tool");
  const delta = out.find((e) => e.type === "STATE_DELTA")!;
  assert.deepEqual(delta.delta, [{ op: "add", path: "/n", value: 1 }]);
});

Deno.test("a client's own tool message is not echoed as TOOL_CALL_RESULT", () => {
  const out = encodeAll([
    started,
    makeEvent("tool_call_result", {
      tool_call_id: "c1",
      message_id: "client-msg",
      content: "yes",
      is_error: false,
    }),
    finished(),
  ], ["client-msg"]);
  assert.deepEqual(types(out), ["RUN_STARTED", "RUN_FINISHED"]);
});

Deno.test("outcomes: client tools pending, approvals, step limit, cancelled, failed", () => {
  const pending = (kinds: ("client_tool" | "approval")[]) => ({
    reason: "tool_calls",
    pending: kinds.map((kind, i) => ({
      tool_call_id: `call_${i}`,
      tool_name: kind === "approval" ? "delete_file" : "ask_user",
      arguments: { i },
      kind,
    })),
  });
  const outcome = (over: Parameters<typeof finished>[0]) =>
    encodeAll([started, finished({ result: null, ...over })]).at(-1)!;

  const clientOnly = outcome({
    status: "interrupted",
    interrupt_payload: pending(["client_tool", "client_tool"]),
  });
  assert.equal(clientOnly.type, "RUN_FINISHED");
  assert.deepEqual(clientOnly.outcome, {
    type: "success",
    pendingToolCallIds: ["call_0", "call_1"],
  });
  assert.ok(!("result" in clientOnly), "no result: omitted, not null");

  const mixed = outcome({
    status: "interrupted",
    interrupt_payload: pending(["approval", "client_tool"]),
  });
  const interrupts = mixed.outcome as { type: string; interrupts: Record<string, unknown>[] };
  assert.equal(interrupts.type, "interrupt");
  assert.deepEqual(interrupts.interrupts.map((i) => [i.id, i.reason, i.toolCallId]), [
    ["call_0", "tool_approval", "call_0"],
    ["call_1", "client_tool", "call_1"],
  ]);
  assert.match(String(interrupts.interrupts[0].message), /delete_file/);
  assert.equal(typeof interrupts.interrupts[0].responseSchema, "object");

  const steps = outcome({
    status: "interrupted",
    interrupt_payload: { reason: "max_steps", max_steps: 3 },
  });
  assert.deepEqual(
    (steps.outcome as { interrupts: unknown[] }).interrupts,
    [{
      id: `${R}:max_steps`,
      reason: "max_steps",
      message: "the run reached its limit of 3 model steps; resume to let the agent continue",
    }],
  );

  const shutdown = outcome({
    status: "interrupted",
    interrupt_payload: { reason: "shutdown" },
    error: { code: "shutdown", message: "the server shut down" },
  });
  assert.deepEqual((shutdown.outcome as { interrupts: unknown[] }).interrupts, [{
    id: `${R}:shutdown`,
    reason: "shutdown",
    message: "the server shut down",
  }]);

  assert.deepEqual(outcome({ status: "cancelled" }).outcome, { type: "cancelled" });

  const failed = outcome({
    status: "failed",
    error: { code: "provider_error", message: "HTTP 500" },
  });
  assert.deepEqual({ ...failed, timestamp: 0 }, {
    type: "RUN_ERROR",
    timestamp: 0,
    message: "HTTP 500",
    code: "provider_error",
  });
});

Deno.test("whatever is open is closed before RUN_FINISHED; nothing follows it", async () => {
  const events: RunEvent[] = [
    started,
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "m1", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "m1", delta: "par" }),
    makeEvent("tool_call_start", { tool_call_id: "c1", tool_name: "t", parent_message_id: "m1" }),
    // content for a message that is not open is dropped rather than sent
    makeEvent("text_message_content", { message_id: "other", delta: "x" }),
    finished({ status: "cancelled", result: null }),
    makeEvent("custom", { name: "late", value: 1 }),
    finished(),
  ];
  const out = encodeAll(events);
  assert.deepEqual(types(out), [
    "RUN_STARTED",
    "STEP_STARTED",
    "TEXT_MESSAGE_START",
    "TOOL_CALL_START",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_END",
    "STEP_FINISHED",
    "RUN_FINISHED",
  ]);
  checkStream(await frames(events));
});

Deno.test("a stream that stops without run_finished ends with RUN_ERROR", async () => {
  const cut = checkStream(
    await frames([
      started,
      makeEvent("step_started", {
        step: 1,
        step_name: "model",
      }),
    ]),
  );
  assert.deepEqual(types(cut), ["RUN_STARTED", "STEP_STARTED", "RUN_ERROR"]);
  assert.equal(cut.at(-1)!.code, "stream_ended");

  let text = "";
  const notice = (async function* (): AsyncGenerator<RunStreamItem> {
    yield { seq: 1, event: started };
    yield { notice: "transport_lost" as const };
  })();
  for await (const f of agUiFrames(notice)) text += f;
  const lost = checkStream(text);
  assert.deepEqual(types(lost), ["RUN_STARTED", "RUN_ERROR"]);
  assert.equal(lost.at(-1)!.code, "transport_lost");
});

Deno.test("frames: id line, event line, data line, blank line, no CRLF", async () => {
  const text = await frames([started, finished()]);
  const [first] = text.split("\n\n");
  assert.match(
    first,
    /^id: 1\nevent: RUN_STARTED\ndata: \{"type":"RUN_STARTED","timestamp":\d+,/,
  );
  assert.ok(!text.includes("\r"));
});

Deno.test("frame ids: N, N.1 … per event; resuming after any of them gives exactly the rest", async () => {
  // A run cut short: its end closes the open message, call and step (several frames, one event).
  const events = [
    started,
    makeEvent("messages_snapshot", { messages: [message({ role: "user", content: [] })] }),
    makeEvent("state_snapshot", { context: { n: 1 } }),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "m1", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "m1", delta: "a " }),
    makeEvent("tool_call_start", { tool_call_id: "c1", tool_name: "t", parent_message_id: "m1" }),
    makeEvent("text_message_content", { message_id: "m1", delta: "b" }),
    makeEvent("state_delta", { delta: [{ op: "replace", path: "/n", value: 2 }] }),
    finished({ status: "cancelled" }),
  ];
  const whole = parseSse(await frames(events)).events;
  const ids = whole.map((e) => e.id!);
  assert.deepEqual(ids.slice(-4), ["10", "10.1", "10.2", "10.3"], "closers, then RUN_FINISHED");
  for (const [i, id] of ids.entries()) {
    const [seq, part = "0"] = id.split(".");
    let text = "";
    const cursor = { seq: Number(seq), part: Number(part) };
    for await (const f of agUiFrames(sequenced(events), { cursor })) text += f;
    if (i + 1 === whole.length) {
      assert.equal(text, "", "nothing after the last frame");
      continue;
    }
    const resumed = checkStream(text); // a stream the client accepts on its own
    const rest = parseSse(text).events.filter((e) => e.id !== undefined);
    assert.deepEqual(rest, whole.slice(i + 1), `after ${id}`);
    // The thread as the client held it at the cursor comes first.
    assert.deepEqual(resumed.slice(0, 2).map((e) => e.type), ["RUN_STARTED", "MESSAGES_SNAPSHOT"]);
  }
});

Deno.test("run_resumed: the lost attempt's open events close, the snapshot at the checkpoint follows", async () => {
  const user = message({ role: "user", content: [{ type: "text", value: "hi" }] });
  const events: RunEvent[] = [
    started,
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "lost", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "lost", delta: "half an ans" }),
    makeEvent("run_resumed", { session_id: S, run_id: R, attempt: 2 }),
    makeEvent("messages_snapshot", { messages: [user] }),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "m2", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "m2", delta: "whole" }),
    makeEvent("text_message_end", { message_id: "m2" }),
    makeEvent("step_finished", { step: 1, step_name: "model" }),
    finished(),
  ];
  const out = encodeAll(events);
  assert.deepEqual(types(out), [
    "RUN_STARTED",
    "STEP_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_END",
    "STEP_FINISHED",
    "CUSTOM",
    "MESSAGES_SNAPSHOT",
    "STEP_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_END",
    "STEP_FINISHED",
    "RUN_FINISHED",
  ]);
  const custom = out.find((e) => e.type === "CUSTOM")!;
  assert.deepEqual(custom, {
    type: "CUSTOM",
    timestamp: custom.timestamp,
    name: "run_resumed",
    value: { attempt: 2 },
  });
  // A client re-attached after the loss (from the resume on) still gets a stream that opens.
  const late = encodeAll(events.slice(4));
  assert.deepEqual(types(late).slice(0, 3), ["RUN_STARTED", "CUSTOM", "MESSAGES_SNAPSHOT"]);
  checkStream(await frames(events));
});

Deno.test("messages_added: each message a user text message, unless the client sent it", async () => {
  const steered = message({ role: "user", content: [{ type: "text", value: "also this" }] });
  const mine = message({ role: "user", content: [{ type: "text", value: "mine" }] });
  const events: RunEvent[] = [
    started,
    makeEvent("messages_added", { messages: [steered, mine] }),
    finished(),
  ];
  const out = encodeAll(events, [mine.message_id]);
  assert.deepEqual(out.map((e) => e.type), [
    "RUN_STARTED",
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "RUN_FINISHED",
  ]);
  assert.equal(out[1].role, "user");
  assert.equal(out[1].messageId, steered.message_id);
  assert.equal(out[2].delta, "also this");
  checkStream(await frames(events));
});
