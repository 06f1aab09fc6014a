/**
 * The fetch of one attempt (models/observed_fetch.ts): it records the status and headers, the
 * first body byte (once), a connection that failed and a body that broke, and passes the
 * attempt's signal to the request.
 */
import assert from "node:assert/strict";
import { type Observed, observedFetch } from "../../src/models/observed_fetch.ts";

const fresh = () => {
  let firstBytes = 0;
  const observed: Observed = { firstByte: false, onFirstByte: () => firstBytes++ };
  return { observed, firstBytes: () => firstBytes };
};

Deno.test("observed fetch: status, headers, the first byte once, the attempt's signal", async () => {
  const { observed, firstBytes } = fresh();
  const signal = new AbortController().signal;
  let sent: AbortSignal | null | undefined;
  const base: typeof fetch = (_input, init) => {
    sent = init?.signal;
    return Promise.resolve(new Response("ab", { status: 200, headers: { "x-a": "1" } }));
  };
  const response = await observedFetch(base, signal, observed)("http://x", {});
  assert.equal(sent, signal);
  assert.equal(observed.status, 200);
  assert.equal(observed.headers?.get("x-a"), "1");
  assert.equal(firstBytes(), 0, "not before the body is read");
  assert.equal(await response.text(), "ab");
  assert.equal(firstBytes(), 1);
  assert.equal(observed.firstByte, true);
});

Deno.test("observed fetch: an error status is passed on as is", async () => {
  const { observed } = fresh();
  const base: typeof fetch = () => Promise.resolve(new Response("nope", { status: 503 }));
  const response = await observedFetch(base, new AbortController().signal, observed)("http://x");
  assert.equal(observed.status, 503);
  assert.equal(await response.text(), "nope");
});

Deno.test("observed fetch: a refused connection and a broken body are recorded", async () => {
  const refused = fresh();
  const down: typeof fetch = () => Promise.reject(new TypeError("connection refused"));
  await assert.rejects(
    observedFetch(down, new AbortController().signal, refused.observed)("http://x"),
  );
  assert.match(String(refused.observed.connectionError), /connection refused/);

  const broken = fresh();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(new Error("reset"));
    },
  });
  const flaky: typeof fetch = () => Promise.resolve(new Response(body));
  const response = await observedFetch(flaky, new AbortController().signal, broken.observed)(
    "http://x",
  );
  await assert.rejects(response.text());
  assert.match(String(broken.observed.bodyError), /reset/);
  assert.equal(broken.observed.connectionError, undefined);
});

Deno.test("observed fetch: a byte body is read through one small buffer, every chunk its own", async () => {
  const { observed } = fresh();
  const parts = [0, 1, 2].map((n) => new Uint8Array(40_000).fill(65 + n));
  const source = new ReadableStream({
    type: "bytes",
    pull(controller: ReadableByteStreamController) {
      const next = parts.length ? parts.shift()! : undefined;
      if (next) return controller.enqueue(next.slice());
      controller.close();
      // A byte source settles a BYOB read pending at its end (as fetch's does).
      controller.byobRequest?.respond(0);
    },
  });
  const base: typeof fetch = () => Promise.resolve(new Response(source));
  const response = await observedFetch(base, new AbortController().signal, observed)("http://x");
  const chunks: Uint8Array[] = [];
  for await (const chunk of response.body!) chunks.push(chunk);
  // Read 16 KiB at a time, each chunk a copy: none was overwritten by a later read.
  assert.ok(chunks.every((c) => c.byteLength <= 16 * 1024 && c.buffer.byteLength === c.byteLength));
  const text = new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  assert.equal(text, "A".repeat(40_000) + "B".repeat(40_000) + "C".repeat(40_000));
  assert.equal(observed.firstByte, true);
});
