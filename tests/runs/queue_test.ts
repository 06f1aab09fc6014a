/**
 * The attached stream's queue is bounded: a producer gets `false` from a full queue and waits for
 * room (what a slow attached client does to its run is in delivery_test.ts).
 */
import assert from "node:assert/strict";
import { AsyncQueue } from "../../src/runs/queue.ts";

Deno.test("queue: full at capacity, room once the consumer takes, order kept", async () => {
  const queue = new AsyncQueue<number>(2);
  assert.equal(queue.push(1), true);
  assert.equal(queue.push(2), true);
  assert.equal(queue.push(3), false, "a full queue refuses");
  assert.equal(queue.size, 2);
  assert.equal(await queue.room(1), false, "no room while nobody reads");

  const iterator = queue[Symbol.asyncIterator]();
  const room = queue.room(60_000);
  assert.deepEqual(await iterator.next(), { value: 1, done: false });
  assert.equal(await room, true, "taking an item makes room at once");
  assert.equal(queue.push(3), true);
  assert.equal(queue.push(4), false);

  queue.end(99);
  assert.equal(queue.push(5), true, "an ended queue drops what is pushed");
  const rest = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
    rest.push(next.value);
  }
  assert.deepEqual(rest, [2, 3, 99], "the end item comes last, even beyond the capacity");
});

Deno.test("queue: a consumer that goes away releases a waiting producer", async () => {
  const queue = new AsyncQueue<string>(1);
  queue.push("a");
  const room = queue.room(60_000);
  await queue[Symbol.asyncIterator]().return!();
  assert.equal(await room, true);
  assert.equal(queue.size, 0, "nothing is held for a consumer that is gone");
  assert.equal(queue.push("b"), true);
  assert.equal(queue.size, 0);
});

Deno.test("queue: bounded in bytes too, one item always taken", async () => {
  const queue = new AsyncQueue<string>(100, { maxBytes: 10, sizeOf: (s) => s.length });
  assert.equal(queue.push("a".repeat(25)), true, "one item, however large");
  assert.equal(queue.push("b"), false, "past the bytes, full though under the capacity");
  const iterator = queue[Symbol.asyncIterator]();
  const room = queue.room(60_000);
  assert.equal((await iterator.next()).value, "a".repeat(25));
  assert.equal(await room, true);
  for (const s of ["1234", "5678", "90"]) assert.equal(queue.push(s), true);
  assert.equal(queue.push("x"), false, "10 bytes queued");
  await iterator.next();
  assert.equal(queue.push("x"), true, "room once 4 bytes were taken");
});
