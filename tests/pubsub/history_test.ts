/** The memory transport's history bounds: per channel, in total, and in time (an injected clock). */
import assert from "node:assert/strict";
import { MemoryHistory } from "../../src/pubsub/history.ts";

const settings = { retention: 1_000, maxEvents: 5, maxBytes: 100 };

Deno.test("memory history: the newest maxEvents per channel, read after a cursor", () => {
  const h = new MemoryHistory(settings);
  for (let seq = 1; seq <= 8; seq++) h.append("a", seq, `m${seq}`);
  const page = h.read("a", 0)!;
  assert.deepEqual(page.entries.map((e) => e.seq), [4, 5, 6, 7, 8]);
  assert.deepEqual([page.first, page.last], [4, 8]);
  assert.deepEqual(h.read("a", 6)!.entries.map((e) => e.message), ["m7", "m8"]);
  assert.deepEqual(h.read("a", 8)!.entries, []);
  // A repeated or older number is not appended again.
  h.append("a", 8, "again");
  assert.equal(h.read("a", 7)!.entries.length, 1);
  assert.equal(h.read("b", 0), null);
});

Deno.test("memory history: over maxBytes, sealed logs go first, then the oldest open ones", () => {
  const h = new MemoryHistory({ ...settings, maxEvents: 100 });
  h.append("old", 1, "x".repeat(30));
  h.append("sealed", 1, "y".repeat(30));
  h.seal("sealed");
  h.append("new", 1, "z".repeat(30));
  assert.equal(h.size, 90);
  h.append("new", 2, "z".repeat(30));
  assert.equal(h.read("sealed", 0), null, "the sealed log went first");
  assert.ok(h.read("old", 0), "the open one is kept while the sealed one suffices");
  h.append("new", 3, "z".repeat(30));
  assert.equal(h.read("old", 0), null, "then the oldest open log");
  assert.ok(h.size <= 100);
  // A single log bigger than the bound keeps its newest messages.
  h.append("new", 4, "z".repeat(60));
  assert.deepEqual(h.read("new", 0)!.entries.map((e) => e.seq), [3, 4]);
  assert.ok(h.size <= 100);
});

Deno.test("memory history: a sealed log expires after the retention window", () => {
  let now = 0;
  const h = new MemoryHistory(settings, () => now);
  h.append("a", 1, "one");
  now = 5_000;
  assert.ok(h.read("a", 0), "an open log does not expire");
  h.seal("a");
  now += 999;
  assert.ok(h.read("a", 0));
  now += 1;
  assert.equal(h.read("a", 0), null);
  assert.equal(h.size, 0);
});

Deno.test("memory history: retention 0 keeps nothing", () => {
  const h = new MemoryHistory({ ...settings, retention: 0 });
  h.append("a", 1, "one");
  assert.equal(h.read("a", 0), null);
});
