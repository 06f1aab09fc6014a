/**
 * A channel's history as a Redis Stream (src/pubsub/stream_history.ts): its key, its entry ids,
 * and how often a write refreshes an open history's TTL.
 */
import assert from "node:assert/strict";
import {
  entryId,
  historyKey,
  OPEN_HISTORY_TTL_MS,
  OpenHistories,
  seqOf,
} from "../../src/pubsub/stream_history.ts";

Deno.test("stream history: a channel's key, and entry ids that carry the sequence number", () => {
  assert.equal(historyKey("agentd:run:r1"), "agentd:run:r1:history");
  assert.equal(entryId(42), "42-0");
  assert.equal(seqOf(entryId(42)), 42);
  assert.equal(seqOf("1700000000000-3"), 1700000000000);
});

Deno.test("stream history: a write refreshes an open history's TTL once, until it is sealed", () => {
  const open = new OpenHistories();
  assert.equal(open.ttlDue("a:history", 60_000), 60_000 + OPEN_HISTORY_TTL_MS);
  // Refreshed just now: the next writes set no TTL (one refresh a minute at most).
  assert.equal(open.ttlDue("a:history", 60_000), 0);
  // Each history has its own refresh.
  assert.equal(open.ttlDue("b:history", 1_000), 1_000 + OPEN_HISTORY_TTL_MS);
  // Sealed, it is forgotten: a write after that (another attempt of the run) refreshes again.
  open.sealed("a:history");
  assert.equal(open.ttlDue("a:history", 60_000), 60_000 + OPEN_HISTORY_TTL_MS);
});
