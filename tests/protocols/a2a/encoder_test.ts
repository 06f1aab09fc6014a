/**
 * The A2A stream encoder as a pure mapper: frame order, artifact chunking (append / lastChunk),
 * the structured state artifact, final statuses, accepted output modes; and the frames decode
 * with the official SDK's ProtoJSON decoder.
 */
import assert from "node:assert/strict";
import { StreamResponse as SdkStreamResponse, TaskState } from "@a2a-js/sdk";
import { makeEvent, type RunEvent, type RunStreamItem } from "../../../src/api/events.ts";
import {
  A2aEncoder,
  type A2aFrame,
  a2aFrames,
  submittedTask,
} from "../../../src/protocols/a2a/encoder.ts";
import type {
  StreamResponse,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from "../../../src/protocols/a2a/responses.ts";

const ids = { session_id: "ctx-1", run_id: "task-1" };

function textEvents(messageId: string, deltas: string[]): RunEvent[] {
  return [
    makeEvent("text_message_start", { message_id: messageId, role: "assistant" }),
    ...deltas.map((delta) => makeEvent("text_message_content", { message_id: messageId, delta })),
    makeEvent("text_message_end", { message_id: messageId }),
  ];
}

function finished(
  status: "completed" | "failed" | "cancelled" | "interrupted",
  extra: Partial<{ result: unknown; interrupt_payload: Record<string, unknown> | null }> = {},
): RunEvent {
  return makeEvent("run_finished", {
    ...ids,
    status,
    interrupt_payload: extra.interrupt_payload ?? null,
    result: extra.result ?? null,
    error: status === "failed" ? { code: "model_error", message: "the model broke" } : null,
  });
}

function encodeAll(events: RunEvent[], modes?: { text: boolean; json: boolean }) {
  const encoder = new A2aEncoder({ taskId: "task-1", contextId: "ctx-1", modes });
  return events.flatMap((e) => encoder.encode(e));
}

const kind = (f: StreamResponse) => Object.keys(f)[0];

/** The status update of a frame (fails when it is another kind). */
function statusOf(frame: StreamResponse | undefined): TaskStatusUpdateEvent {
  assert.ok(frame && "statusUpdate" in frame, `a statusUpdate: ${JSON.stringify(frame)}`);
  return frame.statusUpdate;
}

/** The artifact update of a frame (fails when it is another kind). */
function artifactOf(frame: StreamResponse | undefined): TaskArtifactUpdateEvent {
  assert.ok(frame && "artifactUpdate" in frame, `an artifactUpdate: ${JSON.stringify(frame)}`);
  return frame.artifactUpdate;
}

Deno.test("encoder: a completed run gives working, text chunks, state, completed", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    makeEvent("messages_snapshot", { messages: [] }),
    makeEvent("state_snapshot", { context: { a: 1 } }),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    ...textEvents("m1", ["hello ", "big ", "world"]),
    makeEvent("step_finished", { step: 1, step_name: "model" }),
    finished("completed", { result: { text: "hello big world", context: { a: 1, b: 2 } } }),
  ]);
  assert.deepEqual(frames.map(kind), [
    "statusUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "statusUpdate",
  ]);
  const first = statusOf(frames[0]);
  assert.equal(first.status.state, "TASK_STATE_WORKING");
  assert.equal(first.taskId, "task-1");
  assert.equal(first.contextId, "ctx-1");

  const chunks = frames.slice(1, 4).map(artifactOf);
  assert.deepEqual(chunks.map((c) => c.artifact.parts[0].text), ["hello ", "big ", "world"]);
  assert.deepEqual(chunks.map((c) => c.append), [false, true, true]);
  assert.deepEqual(chunks.map((c) => c.lastChunk), [false, false, true]);
  assert.ok(chunks.every((c) => c.artifact.artifactId === "m1"));

  const state = artifactOf(frames[4]).artifact;
  assert.equal(state.name, "state");
  // A completed run's result is the truth for the final context.
  assert.deepEqual(state.parts, [{ data: { a: 1, b: 2 }, mediaType: "application/json" }]);
  const last = statusOf(frames[5]);
  assert.equal(last.status.state, "TASK_STATE_COMPLETED");
  assert.equal(last.status.message, undefined);
});

Deno.test("encoder: state deltas are tracked for runs that end without a result", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    makeEvent("state_snapshot", { context: { count: 1 } }),
    makeEvent("state_delta", { delta: [{ op: "replace", path: "/count", value: 2 }] }),
    makeEvent("state_delta", { delta: [{ op: "add", path: "/done", value: true }] }),
    finished("cancelled"),
  ]);
  const state = artifactOf(frames.find((f) => "artifactUpdate" in f));
  assert.deepEqual(state.artifact.parts[0].data, { count: 2, done: true });
  assert.equal(statusOf(frames.at(-1)).status.state, "TASK_STATE_CANCELED");
});

Deno.test("encoder: no context, no state artifact; a one-delta message is one last chunk", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    ...textEvents("m1", ["hi"]),
    finished("completed", { result: { text: "hi", context: null } }),
  ]);
  assert.deepEqual(frames.map(kind), ["statusUpdate", "artifactUpdate", "statusUpdate"]);
  const chunk = artifactOf(frames[1]);
  assert.deepEqual([chunk.append, chunk.lastChunk], [false, true]);
});

Deno.test("encoder: two assistant messages are two artifacts; a reopened one appends", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    ...textEvents("m1", ["a", "b"]),
    ...textEvents("m2", ["c"]),
    ...textEvents("m2", ["d"]),
    finished("completed", { result: { text: "cd", context: null } }),
  ]);
  const chunks = frames.filter((f) => "artifactUpdate" in f).map(artifactOf);
  assert.deepEqual(
    chunks.map((c) => [c.artifact.artifactId, c.append, c.lastChunk]),
    [["m1", false, false], ["m1", true, true], ["m2", false, true], ["m2", true, true]],
  );
});

Deno.test("encoder: input-required carries the pending calls and how to answer", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    finished("interrupted", {
      interrupt_payload: {
        reason: "tool_calls",
        pending: [{
          tool_call_id: "call_1",
          tool_name: "pay",
          arguments: { amount: 5 },
          kind: "approval",
        }],
      },
    }),
  ]);
  const status = statusOf(frames.at(-1)).status;
  assert.equal(status.state, "TASK_STATE_INPUT_REQUIRED");
  assert.equal(status.message?.role, "ROLE_AGENT");
  assert.match(status.message?.parts[0].text ?? "", /Approval needed for pay\(\{"amount":5\}\)/);
  assert.deepEqual(status.message?.parts[1].data, {
    reason: "tool_calls",
    pending: [{
      toolCallId: "call_1",
      toolName: "pay",
      arguments: { amount: 5 },
      kind: "approval",
    }],
  });
});

Deno.test("encoder: a failed run's status message holds the error", () => {
  const frames = encodeAll([makeEvent("run_started", ids), finished("failed")]);
  const status = statusOf(frames.at(-1)).status;
  assert.equal(status.state, "TASK_STATE_FAILED");
  assert.equal(status.message?.parts[0].text, "the model broke");
});

Deno.test("encoder: accepted output modes leave out the artifacts the client does not take", () => {
  const events = [
    makeEvent("run_started", ids),
    makeEvent("state_snapshot", { context: { a: 1 } }),
    ...textEvents("m1", ["x", "y"]),
    finished("completed", { result: { text: "xy", context: { a: 1 } } }),
  ];
  const artifactIds = (modes: { text: boolean; json: boolean }) =>
    encodeAll(events, modes).filter((f) => "artifactUpdate" in f).map((f) =>
      artifactOf(f).artifact.artifactId
    );
  assert.deepEqual(artifactIds({ text: true, json: false }), ["m1", "m1"]);
  assert.deepEqual(artifactIds({ text: false, json: true }), ["state"]);
});

Deno.test("encoder: a2aFrames stops at run_finished and at an end notice", async () => {
  async function* source(): AsyncGenerator<RunStreamItem> {
    yield { seq: 1, event: makeEvent("run_started", ids) };
    yield { notice: "transport_lost" };
    yield { seq: 2, event: finished("completed") };
  }
  const out: A2aFrame[] = [];
  for await (const f of a2aFrames(source(), { taskId: "task-1", contextId: "ctx-1" })) {
    out.push(f);
  }
  assert.deepEqual(out.map((f) => kind(f.update)), ["statusUpdate"]);
  assert.deepEqual(out.map((f) => f.id), ["1"]);
});

Deno.test("encoder: frame ids are sequence numbers; a cursor skips what the client has", async () => {
  const events = [
    makeEvent("run_started", ids),
    ...textEvents("m1", ["a", "b", "c"]),
    finished("completed", { result: { text: "abc", context: { n: 1 } } }),
  ];
  async function* source(): AsyncGenerator<RunStreamItem> {
    for (const [i, event] of events.entries()) yield { seq: i + 1, event };
  }
  const all: A2aFrame[] = [];
  for await (const f of a2aFrames(source(), { taskId: "task-1", contextId: "ctx-1" })) {
    all.push(f);
  }
  // A chunk goes out one event late (the encoder holds the last delta back); the end writes the
  // state artifact and the status: 7 and 7.1.
  assert.deepEqual(all.map((f) => f.id), ["1", "4", "5", "6", "7", "7.1"]);
  for (const [index, frame] of all.entries()) {
    const [seq, part = "0"] = frame.id!.split(".");
    const rest: A2aFrame[] = [];
    const cursor = { seq: Number(seq), part: Number(part) };
    for await (
      const f of a2aFrames(source(), { taskId: "task-1", contextId: "ctx-1", cursor })
    ) {
      rest.push(f);
    }
    assert.deepEqual(rest, all.slice(index + 1), `resumed after ${frame.id}`);
  }
});

Deno.test("encoder: every frame decodes with the SDK's StreamResponse (v1.0 ProtoJSON)", () => {
  const frames: StreamResponse[] = [
    submittedTask("task-1", "ctx-1", new Date().toISOString()),
    ...encodeAll([
      makeEvent("run_started", ids),
      makeEvent("state_snapshot", { context: { a: 1 } }),
      ...textEvents("m1", ["p", "q"]),
      finished("completed", { result: { text: "pq", context: { a: 1 } } }),
    ]),
  ];
  for (const frame of frames) {
    const json = JSON.parse(JSON.stringify(frame));
    const decoded = SdkStreamResponse.fromJSON(json);
    assert.ok(decoded.payload, `decodes: ${JSON.stringify(json)}`);
    // ProtoJSON leaves out fields at their default (false); everything else survives.
    assert.deepEqual(SdkStreamResponse.toJSON(decoded), withoutFalse(json), "lossless round trip");
  }
  const task = SdkStreamResponse.fromJSON(frames[0]).payload;
  assert.equal(task?.$case, "task");
  if (task?.$case === "task") {
    assert.equal(task.value.status?.state, TaskState.TASK_STATE_SUBMITTED);
  }
});

/** `value` without the members that are `false` (ProtoJSON omits them). */
function withoutFalse(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFalse);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== false).map(([k, v]) => [k, withoutFalse(v)]),
  );
}

Deno.test("run_resumed: WORKING again; the lost attempt's held-back text never goes out", () => {
  const frames = encodeAll([
    makeEvent("run_started", ids),
    makeEvent("text_message_start", { message_id: "lost", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "lost", delta: "half " }),
    makeEvent("text_message_content", { message_id: "lost", delta: "an ans" }),
    makeEvent("run_resumed", { ...ids, attempt: 2 }),
    ...textEvents("m2", ["whole"]),
    finished("completed", { result: { text: "whole", context: null } }),
  ]);
  assert.deepEqual(frames.map(kind), [
    "statusUpdate",
    "artifactUpdate",
    "statusUpdate",
    "artifactUpdate",
    "statusUpdate",
  ]);
  assert.equal(statusOf(frames[2]).status.state, "TASK_STATE_WORKING");
  // Only the chunk sent before the loss went out of the lost message; "an ans" was dropped.
  const texts = frames.filter((f) => "artifactUpdate" in f).map((f) =>
    JSON.stringify(artifactOf(f).artifact.parts)
  );
  assert.ok(texts[0].includes("half ") && !texts.some((t) => t.includes("an ans")));
  assert.equal(artifactOf(frames[3]).artifact.artifactId, "m2");
  assert.equal(statusOf(frames[4]).status.state, "TASK_STATE_COMPLETED");
});

Deno.test("run_queued: SUBMITTED with the queue's depth, then WORKING once it starts", () => {
  const frames = encodeAll([
    makeEvent("run_queued", { ...ids, queue_depth: 3 }),
    makeEvent("run_started", ids),
    ...textEvents("m1", ["done"]),
    finished("completed", { result: { text: "done", context: null } }),
  ]);
  assert.equal(statusOf(frames[0]).status.state, "TASK_STATE_SUBMITTED");
  assert.deepEqual(statusOf(frames[0]).metadata, { queueDepth: 3 });
  assert.equal(statusOf(frames[1]).status.state, "TASK_STATE_WORKING");
  assert.equal(statusOf(frames.at(-1)!).status.state, "TASK_STATE_COMPLETED");
});

Deno.test("messages_added: WORKING with each user message that joined the task", () => {
  const joined = {
    message_id: "m-user",
    session_id: ids.session_id,
    run_id: ids.run_id,
    role: "user" as const,
    content: [{ type: "text" as const, value: "also this" }],
    created_at: new Date().toISOString(),
  };
  const frames = encodeAll([
    makeEvent("run_started", ids),
    makeEvent("messages_added", { messages: [joined] }),
    finished("completed", { result: { text: "", context: null } }),
  ]);
  const update = statusOf(frames[1]);
  assert.equal(update.status.state, "TASK_STATE_WORKING");
  assert.deepEqual(update.status.message, {
    messageId: "m-user",
    contextId: ids.session_id,
    taskId: ids.run_id,
    role: "ROLE_USER",
    parts: [{ text: "also this" }],
  });
});
