/**
 * `sseResponse` on its own: the frames a source has ready in one turn of the event loop go out as
 * one chunk, byte for byte what frame-by-frame sending gave; a frame that comes alone is not held
 * back; a slow reader still holds the source back; the end, a failure and a client going away
 * behave as they did; `onSseClose` tells of the end without touching the body.
 */
import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import {
  onSseClose,
  sseComment,
  sseFrame,
  sseResponse,
  sseSharedFrame,
} from "../../src/http/kit/mod.ts";
import { parseSse } from "../_kit/mod.ts";

const decoder = new TextDecoder();

/** The chunks of a body as text, read to its end. */
async function chunks(res: Response): Promise<string[]> {
  const out: string[] = [];
  const reader = res.body!.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    out.push(decoder.decode(r.value));
  }
  return out;
}

/** A promise and its resolver. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

/** The next macrotask. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const frame = (i: number) => sseFrame({ i }, "tick", String(i));
const LONG = 60_000;

Deno.test("sse: a burst of frames goes out as one chunk, complete and in order", async () => {
  async function* burst() {
    for (let i = 1; i <= 30; i++) yield frame(i);
  }
  const res = sseResponse(burst(), { keepaliveMs: LONG, retryMs: 1000 });
  const got = await chunks(res);
  const frames = Array.from({ length: 30 }, (_, i) => frame(i + 1)).join("");
  assert.deepEqual(got, ["retry: 1000\n\n", frames]);
  assert.deepEqual(
    parseSse(got.join("")).events.map((e) => e.id),
    frames.match(/id: \d+/g)!
      .map((l) => l.slice(4)),
  );
});

Deno.test("sse: frames of different turns go out separately, none held back", async () => {
  const second = deferred();
  let produced = 0;
  async function* paced() {
    produced++;
    yield frame(1);
    await second.promise;
    produced++;
    yield frame(2);
    produced++;
    yield frame(3);
  }
  const res = sseResponse(paced(), { keepaliveMs: LONG });
  const reader = res.body!.getReader();
  // The first frame arrives on its own while its source waits: it is not held for company.
  const first = await reader.read();
  assert.equal(decoder.decode(first.value), frame(1));
  assert.equal(produced, 1);
  second.resolve();
  const rest: string[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest.push(decoder.decode(r.value));
  }
  assert.deepEqual(rest, [frame(2) + frame(3)]);
});

Deno.test("sse: a frame read left pending at a turn's end is the next chunk's first", async () => {
  let calls = 0;
  const frames: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        const i = ++calls;
        if (i > 6) return { done: true, value: undefined };
        // Frames 3 and 5 come a few turns late: the read waiting for them outlives the chunk.
        if (i === 3 || i === 5) { for (let t = 0; t < 3; t++) await nextTurn(); }
        return { done: false, value: frame(i) };
      },
    }),
  };
  const got = await chunks(sseResponse(frames, { keepaliveMs: LONG }));
  assert.deepEqual(got, [frame(1) + frame(2), frame(3) + frame(4), frame(5) + frame(6)]);
  assert.equal(calls, 7, "each frame read once, then the end");
});

Deno.test("sse: a slow reader holds the source back", async () => {
  let produced = 0;
  let stopped = false;
  async function* endless() {
    try {
      for (;;) yield frame(++produced);
    } finally {
      stopped = true;
    }
  }
  const res = sseResponse(endless(), { keepaliveMs: LONG });
  const reader = res.body!.getReader();
  const first = decoder.decode((await reader.read()).value);
  assert.ok(first.length >= 32 * 1024, "a burst fills a chunk");
  assert.ok(first.length <= 64 * 1024 + frame(produced).length, "a chunk has a bound");
  // Nobody reads: the stream takes at most one more chunk (and one frame) from the source.
  for (let t = 0; t < 20; t++) await nextTurn();
  const held = produced;
  for (let t = 0; t < 20; t++) await nextTurn();
  assert.equal(produced, held, "the source waits for the reader");
  assert.ok(held * frame(held).length <= 3 * 64 * 1024, `${held} frames taken ahead`);
  // What was taken arrives in order, nothing lost or doubled.
  let text = first;
  while (parseSse(text).events.length < held) text += decoder.decode((await reader.read()).value);
  const ids = parseSse(text).events.map((e) => Number(e.id));
  assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1));
  await reader.cancel();
  assert.ok(stopped, "the client going away stops the source");
});

Deno.test("sse: a source that fails mid-burst: its frames, then the error comment, then the end", async () => {
  async function* failing() {
    yield frame(1);
    yield frame(2);
    throw new Error("boom\nagain");
  }
  const got = await chunks(sseResponse(failing(), { keepaliveMs: LONG }));
  assert.equal(got.join(""), frame(1) + frame(2) + sseComment("error: boom\nagain"));
  assert.equal(got.join("").at(-1), "\n");
});

Deno.test("sse: the client going away stops the source and calls onClientGone once", async () => {
  let gone = 0;
  let stopped = false;
  const never = deferred();
  async function* waiting() {
    try {
      yield frame(1);
      await never.promise;
    } finally {
      stopped = true;
    }
  }
  const res = sseResponse(waiting(), { keepaliveMs: LONG, onClientGone: () => gone++ });
  const reader = res.body!.getReader();
  assert.equal(decoder.decode((await reader.read()).value), frame(1));
  await reader.cancel();
  assert.equal(gone, 1);
  never.resolve();
  await nextTurn();
  assert.ok(stopped);
});

Deno.test("sse: keep-alive comments come while the source is quiet", async () => {
  const more = deferred();
  async function* quiet() {
    yield frame(1);
    await more.promise;
    yield frame(2);
  }
  const res = sseResponse(quiet(), { keepaliveMs: 5 });
  const reader = res.body!.getReader();
  assert.equal(decoder.decode((await reader.read()).value), frame(1));
  assert.equal(decoder.decode((await reader.read()).value), sseComment("keep-alive"));
  more.resolve();
  let rest = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest += decoder.decode(r.value);
  }
  assert.equal(rest.replaceAll(sseComment("keep-alive"), ""), frame(2));
});

Deno.test("sse: onSseClose tells of the end, once, through a re-made response", async () => {
  async function* two() {
    yield frame(1);
    yield frame(2);
  }
  const res = sseResponse(two(), { keepaliveMs: LONG });
  // Middleware that sets a header after the handler makes a new Response around the same body.
  const remade = new Response(res.body, res);
  let closed = 0;
  assert.equal(onSseClose(remade, () => closed++), true);
  assert.equal(onSseClose(remade, () => closed++), false, "one watcher");
  assert.equal(onSseClose(new Response("x"), () => closed++), false);
  assert.equal(onSseClose(new Response(null, { status: 204 }), () => closed++), false);
  assert.equal(closed, 0);
  assert.equal((await chunks(remade)).join(""), frame(1) + frame(2));
  assert.equal(closed, 1);

  const never = deferred();
  async function* waiting() {
    yield frame(1);
    await never.promise;
  }
  const cancelled = sseResponse(waiting(), { keepaliveMs: LONG });
  let gone = 0;
  onSseClose(cancelled, () => gone++);
  const reader = cancelled.body!.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(gone, 1);
  never.resolve();

  const down: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error("down")) }),
  };
  const failed = sseResponse(down, { keepaliveMs: LONG });
  let ended = 0;
  onSseClose(failed, () => ended++);
  assert.equal((await chunks(failed)).join(""), sseComment("error: down"));
  assert.equal(ended, 1);
});

Deno.test("sse: a long frame's data is encoded once for every stream writing it", async () => {
  const event = { kind: "snapshot" };
  // Non-ASCII too: the bytes are UTF-8, and the text read back is whole.
  const json = JSON.stringify({ text: "é😀".repeat(40_000) });
  const frame = sseSharedFrame(event, json, "snapshot", "7");
  const again = sseSharedFrame(event, json, "snapshot", "8");
  assert.ok(typeof frame !== "string" && typeof again !== "string");
  assert.equal(frame.head, "id: 7\nevent: snapshot\ndata: ");
  assert.equal(again.bytes, frame.bytes, "the same bytes for a second stream");
  assert.equal(new TextDecoder().decode(frame.bytes), `${json}\n\n`);
  const other = sseSharedFrame({}, json);
  assert.ok(typeof other !== "string" && other.bytes !== frame.bytes, "another key, its own");
  assert.equal(sseSharedFrame(event, "{}", "e", "1"), "id: 1\nevent: e\ndata: {}\n\n");
  // Written by two responses at once, each reads the frame whole, between its neighbours.
  const source = async function* (id: string) {
    yield sseFrame({ before: true }, "b");
    yield sseSharedFrame(event, json, "snapshot", id);
    yield sseFrame({ after: true }, "a");
  };
  const texts = await Promise.all(
    ["1", "2"].map((id) => sseResponse(source(id), { keepaliveMs: 60_000 }).text()),
  );
  for (const [i, text] of texts.entries()) {
    const frames = parseSse(text).events;
    assert.deepEqual(frames.map((f) => f.event), ["b", "snapshot", "a"]);
    assert.equal(frames[1].data, json);
    assert.equal(frames[1].id, String(i + 1));
  }
});
