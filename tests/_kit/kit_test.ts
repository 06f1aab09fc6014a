/** The test kit holds itself to what it promises: a kit that cannot fail makes tests that cannot. */
import assert from "node:assert/strict";
import { errors } from "../../src/errors.ts";
import {
  assertError,
  eventually,
  FAST_VARIABLE,
  openTestStore,
  parseSse,
  readSse,
  slowOptions,
  startTestServer,
  storeKinds,
  TestClock,
} from "./mod.ts";

/** A body that arrives in the given chunks (split anywhere, even inside a UTF-8 character). */
function chunked(...chunks: (string | Uint8Array)[]): Response {
  const encoder = new TextEncoder();
  return new Response(
    new ReadableStream({
      start(controller) {
        for (const c of chunks) controller.enqueue(typeof c === "string" ? encoder.encode(c) : c);
        controller.close();
      },
    }),
  );
}

Deno.test("sse: events with their fields, comments with their position, split anywhere", async () => {
  const euro = new TextEncoder().encode("€");
  const reader = readSse(chunked(
    ": keep-alive\n\n",
    "retry: 1500\nid: 7\nevent: run_started\nda",
    'ta: {"a":1}\n\n',
    "data: one\ndata: two\n\n: stream ended: x\n\n: ",
    euro.slice(0, 1),
    new Uint8Array([...euro.slice(1), 10, 10]),
    "data: last\r\n\r\n",
  ));
  const events = await reader.all();
  assert.deepEqual(events, [
    { event: "run_started", data: '{"a":1}', id: "7", retry: 1500 },
    { data: "one\ntwo" },
    { data: "last" },
  ]);
  assert.deepEqual(reader.comments, [
    { text: "keep-alive", after: 0 },
    { text: "stream ended: x", after: 2 },
    { text: "€", after: 2 },
  ]);
  assert.ok(reader.raw.startsWith(": keep-alive\n\nretry: 1500\n"));
  assert.ok(reader.raw.endsWith("\n\n: €\n\ndata: last\r\n\r\n"));
});

Deno.test("sse: next, until, json and cancel", async () => {
  const reader = parseSse("event: a\ndata: 1\n\nevent: b\ndata: 2\n\nevent: c\ndata: 3\n\n");
  assert.deepEqual(reader.events.map((e) => JSON.parse(e.data)), [1, 2, 3]);
  const live = readSse(chunked("event: a\ndata: 1\n\nevent: b\ndata: 2\n\nevent: c\ndata: 3\n\n"));
  assert.equal((await live.until("b")).data, "2");
  assert.deepEqual((await live.next()).value, { event: "c", data: "3" });
  assert.equal((await live.next()).done, true);
  await assert.rejects(readSse(chunked("data: 1\n\n")).until("z"), /ended before z/);

  // until() leaves a live stream open: later events still arrive.
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encode = (text: string) => new TextEncoder().encode(text);
  const waiting = readSse(readable);
  // Not awaited: a write resolves only once the reader has taken the chunk.
  void writer.write(encode("event: a\ndata: 1\n\n"));
  assert.equal((await waiting.until("a")).data, "1");
  void writer.write(encode("event: b\ndata: 2\n\n"));
  assert.equal((await waiting.until("b")).data, "2");
  void writer.close();
  assert.deepEqual((await waiting.all()).map((e) => e.data), ["1", "2"]);

  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(new TextEncoder().encode("data: x\n\n")),
    cancel: () => void (cancelled = true),
  });
  {
    await using open = readSse(endless);
    await open.next();
  }
  assert.ok(cancelled, "await using cancels the body");
});

Deno.test("eventually: returns the first settled value, fails with the last complaint", async () => {
  let n = 0;
  assert.equal(await eventually(() => ++n >= 3 ? n : undefined, { interval: 1 }), 3);
  n = 0;
  assert.equal(await eventually(() => ++n >= 3, { interval: 1 }), true);
  n = 0;
  await eventually(() => {
    assert.equal(++n, 3);
    return true;
  }, { interval: 1 });
  const error = await eventually(() => assert.fail("never"), { timeout: 30, what: "x" })
    .then(() => undefined, (e: Error) => e);
  assert.match(error!.message, /timed out after 30 ms waiting for x: never/);
  assert.ok(error!.cause instanceof Error);
});

Deno.test("assertError: both shapes, over HTTP and in process, and it fails on a mismatch", async () => {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  await assertError(json(404, { code: 404001, message: "session 's' not found" }), 404001);
  const fields = [{ field: "per_page", errors: [{ code: "range", message: "1 to 1000" }] }];
  await assertError(json(422, { code: 422000, fields }), 422000, { field: "per_page" });
  await assertError(json(422, { code: 422000, fields }), 422000, { rule: "range" });
  await assertError(() => {
    throw errors.runNotFound("r");
  }, 404002);
  await assertError(Promise.reject(errors.validation(fields)), 422000, { field: "per_page" });

  const fails = (p: Promise<unknown>) => assert.rejects(p, assert.AssertionError);
  await fails(assertError(json(404, { code: 404002, message: "x" }), 404001));
  await fails(assertError(json(400, { code: 404001, message: "x" }), 404001));
  await fails(assertError(new Response("{}", { status: 404 }), 404001));
  await fails(assertError(json(500, { code: 500000, message: "at file:///x.ts:1:2" }), 500000));
  await fails(assertError(json(422, { code: 422000, fields: [] }), 422000));
  await fails(assertError(json(422, { code: 422000, fields }), 422000, { field: "page" }));
  await fails(assertError(Promise.resolve(), 404001));
  await fails(assertError(Promise.reject(new Error("plain")), 404001));
});

Deno.test("TestClock: real time plus what the test adds", () => {
  const clock = new TestClock();
  const before = Date.now();
  clock.advance(60_000);
  assert.ok(clock.now() >= before + 60_000 && clock.now() < Date.now() + 61_000);
  assert.equal(new Date(clock.iso()).getTime() <= clock.now(), true);
});

Deno.test("slowOptions: ignored only under AGENTD_TEST_FAST=1, or when ignored anyway", () => {
  const before = Deno.env.get(FAST_VARIABLE);
  try {
    Deno.env.delete(FAST_VARIABLE);
    assert.deepEqual(slowOptions({ name: "a", sanitizeOps: false }), {
      name: "a",
      sanitizeOps: false,
      ignore: false,
    });
    assert.equal(slowOptions({ name: "a", ignore: true }).ignore, true);
    Deno.env.set(FAST_VARIABLE, "1");
    assert.equal(slowOptions({ name: "a" }).ignore, true);
    assert.equal(slowOptions({ name: "a", ignore: false }).ignore, true);
    Deno.env.set(FAST_VARIABLE, "0");
    assert.equal(slowOptions({ name: "a" }).ignore, false);
  } finally {
    if (before === undefined) Deno.env.delete(FAST_VARIABLE);
    else Deno.env.set(FAST_VARIABLE, before);
  }
});

for (const kind of storeKinds) {
  Deno.test(`fixtures (${kind}): the clock reaches the records, await using cleans up`, async () => {
    let path: string | undefined;
    {
      await using fx = await openTestStore(kind);
      path = fx.path;
      const a = await fx.store.createSession("t", { session_id: "a" });
      fx.clock.advance(3_600_000);
      const b = await fx.store.createSession("t", { session_id: "b" });
      const gap = Date.parse(b.created_at) - Date.parse(a.created_at);
      assert.ok(gap >= 3_600_000 && gap < 3_660_000, `gap ${gap}`);
    }
    if (path) assert.equal(await Deno.stat(path).then(() => true, () => false), false);

    let url: string;
    {
      await using t = await startTestServer({ store: kind });
      url = t.url;
      t.clock.advance(86_400_000);
      const res = await t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s" } });
      const created = Date.parse((await res.json()).created_at);
      assert.ok(created >= Date.now() + 86_000_000, "the server's records use its clock");
    }
    await assert.rejects(fetch(`${url}/healthz`), "the server is closed");
  });
}
