/** The native encoder as a pure mapper: a run's stream items in, `/v1` SSE frames out. */
import assert from "node:assert/strict";
import {
  encodeEvent,
  makeEvent,
  type RunEvent,
  type RunStreamItem,
} from "../../../src/api/events.ts";
import { nativeFrames, type NativeFramesOptions } from "../../../src/http/v1/encoder.ts";
import { parseSse } from "../../_kit/mod.ts";

const S = "session-1";
const R = "run-1";

const started = makeEvent("run_started", { session_id: S, run_id: R });
const snapshot = makeEvent("state_snapshot", { context: { a: 1 } });
const finished = makeEvent("run_finished", {
  session_id: S,
  run_id: R,
  status: "completed",
  interrupt_payload: null,
  result: { text: "hi", context: null },
  error: null,
});

/** Items as a run's stream delivers them. */
async function* items(list: RunStreamItem[]): AsyncGenerator<RunStreamItem> {
  for (const item of list) yield item;
}

/** Events numbered from 1. */
function sequenced(events: RunEvent[]): RunStreamItem[] {
  return events.map((event, i) => ({ seq: i + 1, event }));
}

async function text(list: RunStreamItem[], options?: NativeFramesOptions): Promise<string> {
  let out = "";
  for await (const frame of nativeFrames(items(list), options)) {
    out += typeof frame === "string" ? frame : frame.head + new TextDecoder().decode(frame.bytes);
  }
  return out;
}

Deno.test("a frame: id line, event line, the event's wire JSON, blank line", async () => {
  const out = await text(sequenced([started, finished]));
  const [first, second, rest] = out.split("\n\n");
  assert.equal(first, `id: 1\nevent: run_started\ndata: ${encodeEvent(started)}`);
  assert.equal(second, `id: 2\nevent: run_finished\ndata: ${encodeEvent(finished)}`);
  assert.equal(rest, "");
  assert.ok(!out.includes("\r"));
  const { events } = parseSse(out);
  assert.deepEqual(JSON.parse(events[0].data), JSON.parse(JSON.stringify(started)));
});

Deno.test("a cursor skips the frames the client has", async () => {
  const list = sequenced([started, snapshot, snapshot, finished]);
  const ids = async (options?: NativeFramesOptions) =>
    parseSse(await text(list, options)).events.map((e) => e.id);
  assert.deepEqual(await ids(), ["1", "2", "3", "4"]);
  assert.deepEqual(await ids({ cursor: { seq: 2, part: 0 } }), ["3", "4"]);
  // A part of an event the native stream writes in one frame: that frame is had.
  assert.deepEqual(await ids({ cursor: { seq: 2, part: 1 } }), ["3", "4"]);
  assert.deepEqual(await ids({ cursor: { seq: 4, part: 0 } }), []);
});

Deno.test("a sequence-less event has no id and is never skipped", async () => {
  const out = await text([{ seq: null, event: finished }], { cursor: { seq: 9, part: 0 } });
  const { events } = parseSse(out);
  assert.equal(events.length, 1);
  assert.equal(events[0].id, undefined);
  assert.equal(events[0].event, "run_finished");
});

Deno.test("an end notice is a comment, and the stream goes on", async () => {
  const out = await text([
    { seq: 1, event: started },
    { notice: "subscriber_overflow" },
    { seq: 2, event: finished },
  ]);
  const parsed = parseSse(out);
  assert.deepEqual(parsed.comments, [{ text: "stream ended: subscriber_overflow", after: 1 }]);
  assert.deepEqual(parsed.events.map((e) => e.event), ["run_started", "run_finished"]);
});

Deno.test("timestamps never go backwards within a stream", async () => {
  const late = { ...started, timestamp: 2_000 };
  const early = { ...snapshot, timestamp: 1_000 };
  const out = await text(sequenced([late, early, { ...finished, timestamp: 3_000 }]));
  const stamps = parseSse(out).events.map((e) => JSON.parse(e.data).timestamp);
  assert.deepEqual(stamps, [2_000, 2_000, 3_000]);
  assert.equal(early.timestamp, 1_000, "the event itself is left as it is");
});

Deno.test("messages_added: a frame of its own, the messages as stored", async () => {
  const added = makeEvent("messages_added", {
    messages: [{
      message_id: "u2",
      session_id: S,
      run_id: R,
      role: "user",
      content: [{ type: "text", value: "also this" }],
      created_at: new Date().toISOString(),
    }],
  });
  const { events } = parseSse(await text(sequenced([started, added, finished])));
  assert.equal(events[1].event, "messages_added");
  assert.deepEqual(JSON.parse(events[1].data), JSON.parse(JSON.stringify(added)));
});
