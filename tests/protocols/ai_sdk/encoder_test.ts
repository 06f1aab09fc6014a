/**
 * The AI SDK encoder on event sequences the HTTP tests do not reach easily: a broken stream, a
 * cancelled run, arguments that are not JSON, state patches, results of calls the message does not
 * hold. Every stream is also held to the `ai` package's chunk schema (chat.ts `checkStream`).
 */
import assert from "node:assert/strict";
import { makeEvent, type RunEvent, type RunStreamItem } from "../../../src/api/events.ts";
import { type AiSdkEncoderOptions, aiSdkFrames } from "../../../src/protocols/ai_sdk/encoder.ts";
import { parseSse } from "../../_kit/mod.ts";
import { checkStream } from "./chat.ts";

const ids = { session_id: "s1", run_id: "r1" };

async function* items(events: (RunEvent | RunStreamItem)[]): AsyncGenerator<RunStreamItem> {
  let seq = 0;
  for (const e of events) yield "kind" in e ? { seq: ++seq, event: e } : e;
}

async function encode(
  events: (RunEvent | RunStreamItem)[],
  options: AiSdkEncoderOptions = { messageId: "m1" },
): Promise<{ text: string; chunks: Record<string, unknown>[] }> {
  let text = "";
  for await (const frame of aiSdkFrames(items(events), options)) text += frame;
  return { text, chunks: await checkStream(text) };
}

const finished = (status: "completed" | "failed" | "cancelled" | "interrupted", extra = {}) =>
  makeEvent("run_finished", {
    ...ids,
    status,
    interrupt_payload: null,
    result: null,
    error: null,
    ...extra,
  });

const types = (chunks: Record<string, unknown>[]) => chunks.map((c) => c.type);

Deno.test("ai_sdk encoder: a text answer, framed with ids and [DONE]", async () => {
  const { text, chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "a1", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "a1", delta: "hi" }),
    makeEvent("text_message_end", { message_id: "a1" }),
    makeEvent("step_finished", { step: 1, step_name: "model" }),
    finished("completed"),
  ]);
  assert.deepEqual(types(chunks), [
    "start",
    "start-step",
    "text-start",
    "text-delta",
    "text-end",
    "finish-step",
    "finish",
  ]);
  assert.deepEqual(chunks[0], {
    type: "start",
    messageId: "m1",
    messageMetadata: { sessionId: "s1", runId: "r1" },
  });
  assert.deepEqual(chunks.at(-1), {
    type: "finish",
    finishReason: "stop",
    messageMetadata: { sessionId: "s1", runId: "r1", status: "completed" },
  });
  const frames = parseSse(text).events;
  assert.deepEqual(frames.map((f) => f.id), ["1", "2", "3", "4", "5", "7", "7.1", undefined]);
  assert.equal(frames.at(-1)?.data, "[DONE]");
});

Deno.test("ai_sdk encoder: usage and the model's finish reason in finish", async () => {
  const finish = async (extra: Record<string, unknown>) =>
    (await encode([makeEvent("run_started", ids), finished("completed", extra)])).chunks.at(-1);
  assert.deepEqual(
    await finish({
      usage: { input_tokens: 10, output_tokens: 5, reasoning_tokens: 3, cached_input_tokens: 4 },
      finish_reason: "length",
    }),
    {
      type: "finish",
      finishReason: "length",
      messageMetadata: {
        sessionId: "s1",
        runId: "r1",
        status: "completed",
        usage: {
          inputTokens: 10,
          outputTokens: 5,
          totalTokens: 15,
          reasoningTokens: 3,
          cachedInputTokens: 4,
        },
        modelFinishReason: "length",
      },
    },
  );
  assert.equal((await finish({ finish_reason: "refusal" }))?.finishReason, "content-filter");
  assert.equal((await finish({ finish_reason: "content_filter" }))?.finishReason, "content-filter");
  assert.equal((await finish({ usage: { output_tokens: 1 } }))?.finishReason, "stop");
  const metadata = (await finish({ usage: { output_tokens: 1 } }))?.messageMetadata;
  assert.deepEqual((metadata as { usage: unknown }).usage, { outputTokens: 1 });
});

Deno.test("ai_sdk encoder: a call the provider runs says so", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("tool_call_start", {
      tool_call_id: "ws",
      tool_name: "web_search",
      parent_message_id: "a1",
      provider_executed: true,
    }),
    makeEvent("tool_call_args", { tool_call_id: "ws", delta: '{"q":"x"}' }),
    makeEvent("tool_call_end", { tool_call_id: "ws" }),
    makeEvent("tool_call_result", {
      tool_call_id: "ws",
      message_id: "t1",
      content: [{ url: "https://example.com" }],
      is_error: false,
      provider_executed: true,
    }),
    finished("completed"),
  ]);
  const calls = chunks.filter((c) => String(c.type).startsWith("tool-"));
  assert.deepEqual(calls.map((c) => [c.type, c.providerExecuted]), [
    ["tool-input-start", true],
    ["tool-input-delta", undefined],
    ["tool-input-available", true],
    ["tool-output-available", true],
  ]);
});

Deno.test("ai_sdk encoder: reasoning parts, closed as reasoning when the stream breaks", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("reasoning_message_start", { message_id: "r1", parent_message_id: "a1" }),
    makeEvent("reasoning_message_content", { message_id: "r1", delta: "think" }),
    makeEvent("reasoning_message_end", { message_id: "r1" }),
    makeEvent("reasoning_message_start", { message_id: "r2", parent_message_id: "a1" }),
    makeEvent("text_message_start", { message_id: "a1", role: "assistant" }),
    { notice: "transport_lost" },
  ]);
  assert.deepEqual(chunks.slice(2, 8), [
    { type: "reasoning-start", id: "r1" },
    { type: "reasoning-delta", id: "r1", delta: "think" },
    { type: "reasoning-end", id: "r1" },
    { type: "reasoning-start", id: "r2" },
    { type: "text-start", id: "a1" },
    { type: "reasoning-end", id: "r2" },
  ]);
  assert.equal(chunks[8].type, "text-end");
});

Deno.test("ai_sdk encoder: arguments that are not a JSON object are an input error", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("tool_call_start", { tool_call_id: "c1", tool_name: "t", parent_message_id: "a1" }),
    makeEvent("tool_call_args", { tool_call_id: "c1", delta: "[1," }),
    makeEvent("tool_call_end", { tool_call_id: "c1" }),
    finished("completed"),
  ]);
  const error = chunks.find((c) => c.type === "tool-input-error");
  assert.deepEqual(error, {
    type: "tool-input-error",
    toolCallId: "c1",
    toolName: "t",
    input: "[1,",
    errorText: "the model's arguments are not a JSON object",
  });
});

Deno.test("ai_sdk encoder: the state whole after each patch; emits by name", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("state_snapshot", { context: { a: 1 } }),
    makeEvent("state_delta", { delta: [{ op: "add", path: "/b", value: 2 }] }),
    makeEvent("state_delta", { delta: [{ op: "remove", path: "/nope" }] }),
    makeEvent("custom", { name: "progress", value: { done: 1 } }),
    finished("completed"),
  ]);
  const data = chunks.filter((c) => String(c.type).startsWith("data-"));
  assert.deepEqual(data, [
    { type: "data-state", id: "state", data: { a: 1 } },
    { type: "data-state", id: "state", data: { a: 1, b: 2 } },
    { type: "data-progress", id: "progress", data: { done: 1 } },
  ]);
});

Deno.test("ai_sdk encoder: results of calls the message does not hold", async () => {
  const result = (id: string) =>
    makeEvent("tool_call_result", {
      tool_call_id: id,
      message_id: `t-${id}`,
      content: { error: "the user rejected this tool call" },
      is_error: true,
    });
  const events = [makeEvent("run_started", ids), result("held"), result("old"), result("replayed")];
  const { chunks } = await encode([...events, finished("completed")], {
    messageId: "m1",
    held: ["held"],
    denied: ["held"],
    earlier: [{ toolCallId: "replayed", toolName: "t", input: { x: 1 } }],
  });
  assert.deepEqual(chunks.slice(1, -1), [
    { type: "tool-output-denied", toolCallId: "held" },
    { type: "tool-input-available", toolCallId: "replayed", toolName: "t", input: { x: 1 } },
    {
      type: "tool-output-error",
      toolCallId: "replayed",
      errorText: "the user rejected this tool call",
    },
  ]);
});

Deno.test("ai_sdk encoder: cancelled, failed, waiting and broken runs", async () => {
  const cancelled = await encode([makeEvent("run_started", ids), finished("cancelled")]);
  assert.deepEqual(types(cancelled.chunks), ["start", "abort", "finish"]);
  assert.equal(cancelled.chunks.at(-1)?.finishReason, "other");

  const failed = await encode([
    makeEvent("run_started", ids),
    finished("failed", { error: { code: "model_error", message: "boom" } }),
  ]);
  assert.deepEqual(failed.chunks.slice(1), [
    { type: "error", errorText: "boom (model_error)" },
    {
      type: "finish",
      finishReason: "error",
      messageMetadata: {
        sessionId: "s1",
        runId: "r1",
        status: "failed",
        error: { code: "model_error", message: "boom" },
      },
    },
  ]);

  const waiting = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    finished("interrupted", {
      interrupt_payload: {
        reason: "tool_calls",
        pending: [
          { tool_call_id: "c1", tool_name: "pay", arguments: {}, kind: "approval" },
          { tool_call_id: "c2", tool_name: "loc", arguments: {}, kind: "client_tool" },
        ],
      },
    }),
  ]);
  assert.deepEqual(types(waiting.chunks), [
    "start",
    "start-step",
    "tool-approval-request",
    "finish-step",
    "finish",
  ]);
  assert.equal(waiting.chunks.at(-1)?.finishReason, "tool-calls");

  const broken = await encode([
    makeEvent("run_started", ids),
    makeEvent("text_message_start", { message_id: "a1", role: "assistant" }),
    { notice: "transport_lost" },
  ]);
  assert.deepEqual(types(broken.chunks), ["start", "text-start", "text-end", "error", "finish"]);
  assert.match(String(broken.chunks[3].errorText), /transport_lost/);

  const ended = await encode([makeEvent("run_started", ids)]);
  assert.deepEqual(types(ended.chunks), ["start", "error", "finish"]);
  assert.match(String(ended.chunks[1].errorText), /stream_ended/);
});

Deno.test("ai_sdk encoder: run_resumed ends the lost step, says so, and the new step follows", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "lost", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "lost", delta: "half" }),
    makeEvent("run_resumed", { ...ids, attempt: 2 }),
    makeEvent("messages_snapshot", { messages: [] }),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "a2", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "a2", delta: "whole" }),
    makeEvent("text_message_end", { message_id: "a2" }),
    finished("completed"),
  ]);
  assert.deepEqual(types(chunks), [
    "start",
    "start-step",
    "text-start",
    "text-delta",
    "text-end",
    "finish-step",
    "data-run_resumed",
    "start-step",
    "text-start",
    "text-delta",
    "text-end",
    "finish-step",
    "finish",
  ]);
  assert.deepEqual(chunks[6], {
    type: "data-run_resumed",
    id: "run_resumed",
    data: { attempt: 2 },
  });
});

Deno.test("ai_sdk encoder: run_queued starts the message with a transient data part", async () => {
  const { chunks } = await encode([
    makeEvent("run_queued", { ...ids, queue_depth: 2 }),
    makeEvent("run_started", ids),
    makeEvent("step_started", { step: 1, step_name: "model" }),
    makeEvent("text_message_start", { message_id: "a1", role: "assistant" }),
    makeEvent("text_message_content", { message_id: "a1", delta: "hi" }),
    makeEvent("text_message_end", { message_id: "a1" }),
    finished("completed"),
  ]);
  assert.deepEqual(types(chunks).slice(0, 3), ["start", "data-run_queued", "start-step"]);
  assert.deepEqual(chunks[1], {
    type: "data-run_queued",
    id: "run_queued",
    data: { queueDepth: 2 },
    transient: true,
  });
  assert.equal(types(chunks).filter((t) => t === "start").length, 1);
});

Deno.test("ai_sdk encoder: messages_added is a data part per message", async () => {
  const { chunks } = await encode([
    makeEvent("run_started", ids),
    makeEvent("messages_added", {
      messages: [{
        message_id: "u2",
        session_id: ids.session_id,
        run_id: ids.run_id,
        role: "user",
        content: [{ type: "text", value: "also this" }],
        created_at: new Date().toISOString(),
      }],
    }),
    finished("completed"),
  ]);
  assert.deepEqual(types(chunks), ["start", "data-messages_added", "finish"]);
  assert.deepEqual(chunks[1], {
    type: "data-messages_added",
    id: "u2",
    data: { id: "u2", role: "user", text: "also this" },
  });
});
