/** The keyset cursor: opaque, URL-safe, round-trips, and rejects what it did not make. */
import assert from "node:assert/strict";
import { apiErrorOf } from "../../src/http/kit/mod.ts";
import { StoreError } from "../../src/store/mod.ts";
import { decodeCursor, encodeCursor, pageWindow, toPage } from "../../src/store/cursor.ts";

Deno.test("cursor: round-trips seq values and is URL-safe", () => {
  for (const seq of [0, 1, 62, 63, 1000, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
    const cursor = encodeCursor(seq);
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.equal(decodeCursor(cursor), seq);
  }
  assert.equal(decodeCursor(undefined), 0);
  assert.equal(decodeCursor(null), 0);
});

Deno.test("cursor: anything else is an invalid cursor, a 422 on the page field", () => {
  const bad = ["", "=", "a b", "Zm9v", btoa("v1:9007199254740993"), btoa("v1:1:2")];
  for (const page of bad) {
    assert.throws(() => decodeCursor(page), (e) => {
      const answer = apiErrorOf(e);
      return e instanceof StoreError && e.kind === "invalid_cursor" &&
        answer?.code === 422000 && answer.fields?.[0].field === "page";
    });
  }
});

Deno.test("cursor: pageWindow asks one extra row and toPage turns it into next_page", () => {
  assert.deepEqual(pageWindow({ per_page: 2 }), { after: 0, limit: 3 });
  // The API checks per_page first: a bad one reaching the store is the caller's bug.
  assert.throws(() => pageWindow({ per_page: 0 }), RangeError);
  const rows = [{ seq: 4 }, { seq: 7 }, { seq: 9 }];
  const page = toPage(rows, 2, 10, (r) => r.seq);
  assert.deepEqual(page, { items: [4, 7], count: 10, next_page: encodeCursor(7) });
  assert.deepEqual(toPage(rows, 3, 3, (r) => r.seq).next_page, null);
});
