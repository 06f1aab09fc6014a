/**
 * Test helpers of the AG-UI add-on: a `fetch` that records every SSE body the official client
 * reads, and a checker that holds each recorded stream to the wire rules (framing, `@ag-ui/core`
 * schemas, camelCase, no nulls for absent fields, integer timestamps) and the ordering rules.
 */
import assert from "node:assert/strict";
import { EventSchema, MessageSchema } from "@ag-ui/core/schemas";
import type { BaseEvent, Event as AgUiEvent } from "@ag-ui/client";
import { agUiEventSchema, type AgUiWireEvent } from "../../../src/protocols/ag_ui/event_schemas.ts";
import type { Message } from "../../../src/api/schemas.ts";
import { parseSse } from "../../_kit/mod.ts";

/** A parsed AG-UI event as it came over the wire. */
export type WireEvent = BaseEvent & Record<string, unknown>;

/** A `fetch` for `HttpAgent` that keeps a copy of every response body. */
export class RecordingFetch {
  readonly bodies: Promise<string>[] = [];
  readonly requests: unknown[] = [];

  /** The function to hand to `new HttpAgent({ fetch })`. */
  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (typeof init?.body === "string") this.requests.push(JSON.parse(init.body));
    const res = await fetch(input, init);
    // Error answers (JSON) are the tests' business; only event streams are recorded.
    if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    const [mine, theirs] = res.body.tee();
    this.bodies.push(new Response(mine).text());
    return new Response(theirs, { status: res.status, headers: res.headers });
  };

  /** Every recorded SSE stream, each checked with `checkStream`. */
  async checkAll(): Promise<WireEvent[][]> {
    const texts = await Promise.all(this.bodies);
    return texts.map((text) => checkStream(text));
  }
}

const eventShapes = new Map<string, Set<string>>(
  EventSchema.options.map((o) => [String(o.shape.type.value), new Set(Object.keys(o.shape))]),
);
const messageShapes = new Map<string, Set<string>>(
  MessageSchema.options.map((o) => [String(o.shape.role.value), new Set(Object.keys(o.shape))]),
);

/** Fields whose value may legitimately be null (JSON payloads chosen by the application). */
const NULLABLE = new Set(["value", "snapshot"]);

/**
 * Parses an AG-UI SSE body and asserts everything a conforming producer must do; returns the
 * events. Keep-alive comments are allowed between frames.
 */
export function checkStream(text: string): WireEvent[] {
  assert.ok(!text.includes("\r"), "frames are separated by \\n\\n, never CRLF");
  assert.ok(text.endsWith("\n\n"), "the stream ends with a complete frame");
  assert.match(
    text,
    FRAMES,
    "every frame is a comment, or an id line (the stream cursor), an event line and a data line",
  );
  const events: WireEvent[] = [];
  for (const frame of parseSse(text).events) {
    const data = JSON.parse(frame.data) as WireEvent;
    assert.equal(frame.event, data.type, "event: line equals the type");
    checkEvent(data);
    events.push(data);
  }
  checkOrder(events);
  return events;
}

/** The whole wire: frames that are a comment line, or exactly `event: TYPE` then `data: {...}`. */
const FRAMES = /^(?:(?::[^\n]*|(?:id: \d+(?:\.\d+)?\n)?event: [A-Z_]+\ndata: \{[^\n]*)\n\n)*$/;

/** The fields of each event as the API reference documents it (`agUiEventSchema()`). */
const documentedShapes = new Map<string, Set<string>>(
  agUiEventSchema().options.map((o) => [String(o.shape.type.value), new Set(Object.keys(o.shape))]),
);

// What the reference documents is one of the protocol's events, as `@ag-ui/core` types them.
const _documentedIsAgUi = (event: AgUiWireEvent): AgUiEvent => event;

/**
 * One event against the `@ag-ui/core` schema, strictly (no unknown fields, no null fields), and
 * against what the API reference documents (`agUiEventSchema()`: each field, no other).
 */
export function checkEvent(event: WireEvent): void {
  const parsed = EventSchema.safeParse(event);
  assert.ok(parsed.success, `${event.type} fails the @ag-ui/core schema: ${parsed.error}`);
  const documented = agUiEventSchema().safeParse(event);
  assert.ok(documented.success, `${event.type} is not as documented: ${documented.error}`);
  for (const key of Object.keys(event)) {
    assert.ok(documentedShapes.get(event.type)?.has(key), `${event.type}.${key} is undocumented`);
  }
  const known = eventShapes.get(event.type)!;
  for (const [key, value] of Object.entries(event)) {
    assert.ok(known.has(key), `${event.type} has a field the protocol does not define: ${key}`);
    if (!NULLABLE.has(key)) assert.notEqual(value, null, `${event.type}.${key} is null`);
  }
  if ("timestamp" in event) {
    assert.ok(Number.isInteger(event.timestamp), "timestamp is integer milliseconds");
    assert.ok(Math.abs(event.timestamp! - Date.now()) < 600_000, "timestamp is epoch ms");
  }
  if (event.type === "MESSAGES_SNAPSHOT") {
    for (const m of event.messages as Record<string, unknown>[]) {
      const shape = messageShapes.get(String(m.role))!;
      for (const [key, value] of Object.entries(m)) {
        assert.ok(shape.has(key), `a ${m.role} message has an unknown field ${key}`);
        assert.notEqual(value, null, `message field ${key} is null`);
      }
    }
  }
}

/**
 * The ordering rules: RUN_STARTED first, exactly one terminal event and nothing after it, content
 * only inside an open message or call, everything closed before RUN_FINISHED, and timestamps that
 * never go backwards.
 */
export function checkOrder(events: WireEvent[]): void {
  assert.ok(events.length > 0, "a stream has events");
  const terminal = events.findIndex((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR");
  assert.equal(terminal, events.length - 1, "the terminal event is the last one, and only one");
  if (events[0].type !== "RUN_ERROR") assert.equal(events[0].type, "RUN_STARTED");
  const messages = new Set<string>();
  const calls = new Set<string>();
  const steps: string[] = [];
  let timestamp = 0;
  for (const e of events) {
    if (e.timestamp !== undefined) {
      assert.ok(e.timestamp >= timestamp, `${e.type}'s timestamp goes back in time`);
      timestamp = e.timestamp;
    }
    switch (e.type) {
      case "TEXT_MESSAGE_START":
        assert.ok(!messages.has(e.messageId as string), "message started twice");
        messages.add(e.messageId as string);
        break;
      case "TEXT_MESSAGE_CONTENT":
        assert.ok(messages.has(e.messageId as string), "content outside an open message");
        break;
      case "TEXT_MESSAGE_END":
        assert.ok(messages.delete(e.messageId as string), "end of a message not open");
        break;
      case "TOOL_CALL_START":
        assert.ok(!calls.has(e.toolCallId as string), "tool call started twice");
        calls.add(e.toolCallId as string);
        break;
      case "TOOL_CALL_ARGS":
        assert.ok(calls.has(e.toolCallId as string), "args outside an open tool call");
        break;
      case "TOOL_CALL_END":
        assert.ok(calls.delete(e.toolCallId as string), "end of a tool call not open");
        break;
      case "STEP_STARTED":
        assert.ok(!steps.includes(e.stepName as string), "step started twice");
        steps.push(e.stepName as string);
        break;
      case "STEP_FINISHED":
        assert.equal(steps.pop(), e.stepName, "steps close in order");
        break;
      case "RUN_FINISHED":
        assert.equal(messages.size, 0, "open messages at RUN_FINISHED");
        assert.equal(calls.size, 0, "open tool calls at RUN_FINISHED");
        assert.equal(steps.length, 0, "open steps at RUN_FINISHED");
        break;
    }
  }
}

/** Reads a whole AG-UI SSE response, checks it, and returns its events. */
export async function readStream(res: Response): Promise<WireEvent[]> {
  assert.equal(res.status, 200, `expected a stream, got ${res.status}`);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  return checkStream(await res.text());
}

/** The types of events, in order, without the noise of deltas. */
export function types(events: WireEvent[]): string[] {
  return events.map((e) => e.type).filter((t) =>
    t !== "TEXT_MESSAGE_CONTENT" && t !== "TOOL_CALL_ARGS"
  );
}

/** Absolute path of a fixture tool module. */
export function fixture(name: string): string {
  return new URL(`./fixtures/${name}`, import.meta.url).pathname;
}

/** The test tool that needs an approval before it runs (a manifest `tool` block). */
export const APPROVAL_TOOL = {
  kind: "javascript",
  module: fixture("delete_tool.js"),
  description: "deletes a file (needs approval)",
  parameters: { type: "object", properties: { path: { type: "string" } } },
  requires_approval: true,
};

/** A stored message of session `session-1`, run `run-1` (a fresh id unless given). */
export function storedMessage(
  partial: Partial<Message> & Pick<Message, "role" | "content">,
): Message {
  return {
    message_id: crypto.randomUUID(),
    session_id: "session-1",
    run_id: "run-1",
    created_at: new Date().toISOString(),
    ...partial,
  };
}
