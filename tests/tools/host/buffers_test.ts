/**
 * The output buffers of a tool process: the tail of its output and the line splitter.
 */
import assert from "node:assert/strict";
import { LineBuffer, Tail } from "../../../src/tools/host/buffers.ts";

Deno.test("tail: keeps the last characters and says when it dropped some", () => {
  const tail = new Tail(5);
  assert.equal(tail.toString(), "");
  tail.push("abc");
  assert.equal(tail.toString(), "abc");
  tail.push("defg");
  assert.equal(tail.toString(), "…cdefg");
  // A chatty stream stays bounded (the text is trimmed once it is twice the limit).
  for (let i = 0; i < 1000; i++) tail.push("0123456789");
  assert.equal(tail.toString(), "…56789");
});

Deno.test("line buffer: pieces of a line come out as one array", () => {
  const line = new LineBuffer();
  assert.equal(line.length, 0);
  assert.equal(line.first, undefined);
  const only = new Uint8Array([0x1e, 1, 2]);
  line.push(only);
  assert.equal(line.first, 0x1e);
  assert.equal(line.take(), only, "one piece is not copied");
  assert.equal(line.length, 0);
  line.push(new Uint8Array([1, 2]));
  line.push(new Uint8Array([]));
  line.push(new Uint8Array([3]));
  assert.equal(line.length, 3);
  assert.deepEqual(line.take(), new Uint8Array([1, 2, 3]));
  assert.equal(line.length, 0);
});
