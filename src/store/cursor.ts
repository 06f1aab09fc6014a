/**
 * Keyset pagination shared by both stores. A cursor names the key (`seq`; a message's `pos`) of
 * the last row a page returned; the next page asks for rows with a greater key. Because keys only
 * grow, rows inserted while a client pages land after the cursor and never shift or repeat earlier
 * rows (an offset would).
 */
import type { Page } from "../api/schemas.ts";
import { storeErrors } from "./errors.ts";
import type { PageQuery } from "./types.ts";

/** The version tag inside every cursor, so the format can change without misreading old ones. */
const VERSION = "v1";
const SHAPE = /^v1:(\d{1,16})$/;

/** Text as an opaque URL-safe token (base64url without padding). */
function token(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The text of a token; anything that is not one is a `StoreError` `invalid_cursor`. */
function untoken(page: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(page)) throw storeErrors.invalidCursor();
  try {
    const padded = page.replaceAll("-", "+").replaceAll("_", "/");
    return atob(padded + "=".repeat((4 - padded.length % 4) % 4));
  } catch {
    throw storeErrors.invalidCursor();
  }
}

/** Encodes the `seq` of a page's last row as the opaque `next_page` string. */
export function encodeCursor(seq: number): string {
  return token(`${VERSION}:${seq}`);
}

/**
 * Decodes `page` to the `seq` after which the page starts (0 when absent); anything that is not
 * one of our cursors is a `StoreError` `invalid_cursor` (the API answers 422 on `page`).
 */
export function decodeCursor(page: string | null | undefined): number {
  if (page === undefined || page === null) return 0;
  const match = SHAPE.exec(untoken(page));
  if (!match || !Number.isSafeInteger(Number(match[1]))) throw storeErrors.invalidCursor();
  return Number(match[1]);
}

/** The key of a row in a newest-first list: its time (epoch ms), then its `seq`. */
export interface RecentKey {
  time: number;
  seq: number;
}

const RECENT = /^v1r:(\d{1,16}):(\d{1,16})$/;

/**
 * Decodes the cursor of a newest-first list (rows ordered by time, then `seq`, descending): the
 * key of the previous page's last row, before which this page starts (null: from the newest).
 */
export function decodeRecentCursor(page: string | null | undefined): RecentKey | null {
  if (page === undefined || page === null) return null;
  const match = RECENT.exec(untoken(page));
  const [time, seq] = [Number(match?.[1]), Number(match?.[2])];
  if (!match || !Number.isSafeInteger(time) || !Number.isSafeInteger(seq)) {
    throw storeErrors.invalidCursor();
  }
  return { time, seq };
}

/** The list envelope of a newest-first page from up to `per_page + 1` rows. */
export function toRecentPage<R, T>(
  rows: R[],
  perPage: number,
  count: number,
  toRecord: (row: R) => T,
  key: (row: R) => RecentKey,
): Page<T> {
  const more = rows.length > perPage;
  const shown = more ? rows.slice(0, perPage) : rows;
  const last = more ? key(shown[shown.length - 1]) : null;
  return {
    items: shown.map(toRecord),
    count,
    next_page: last ? token(`v1r:${last.time}:${last.seq}`) : null,
  };
}

/**
 * Checks `per_page` and decodes the cursor of a list call; returns the `seq` to start after and
 * how many rows to fetch (one more than the page, to learn whether another page follows).
 */
export function pageWindow(page: PageQuery): { after: number; limit: number } {
  // The API validates `per_page` before any store call: anything else is a bug of the caller.
  if (!Number.isInteger(page.per_page) || page.per_page < 1) {
    throw new RangeError(`per_page must be a positive integer, got ${page.per_page}`);
  }
  return { after: decodeCursor(page.page), limit: page.per_page + 1 };
}

/**
 * A page of rows (`toPage`) whose records are `items`, made from its first rows only: when there
 * are fewer items than rows (a page cut short by a size budget), the next page starts after the
 * last row shown. `key` as for `toPage`.
 */
export function cutPage<R, T>(
  page: Page<R>,
  items: T[],
  key: (row: R) => number = (row) => (row as { seq: number }).seq,
): Page<T> {
  const cut = items.length < page.items.length;
  return {
    items,
    count: page.count,
    next_page: cut ? encodeCursor(key(page.items[items.length - 1])) : page.next_page,
  };
}

/**
 * Bytes of records one page holds at most, as their JSON (docs/api.md#pagination): past it a page
 * ends early (fewer items than `per_page`, at least one) and its `next_page` goes on from the last
 * item shown. So a page of large messages or results never builds an answer of `per_page` times
 * their size.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;

/** The size of a record as JSON, in UTF-16 code units (bytes for ASCII; a bound's measure). */
export function jsonSize(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/**
 * Builds the list envelope from up to `per_page + 1` rows ordered by their key (`seq` unless
 * `key` says otherwise): the extra row only says that a next page exists. The page holds as many
 * records as fit `PAGE_BYTES` (at least one), and goes on after the last one shown.
 */
export function toPage<R, T>(
  rows: R[],
  perPage: number,
  count: number,
  toRecord: (row: R) => T,
  key: (row: R) => number = (row) => (row as { seq: number }).seq,
): Page<T> {
  const shown = rows.length > perPage ? rows.slice(0, perPage) : rows;
  const items: T[] = [];
  let bytes = 0;
  for (const row of shown) {
    const record = toRecord(row);
    bytes += jsonSize(record);
    if (items.length > 0 && bytes > PAGE_BYTES) break;
    items.push(record);
  }
  const more = items.length < rows.length;
  return {
    items,
    count,
    next_page: more ? encodeCursor(key(shown[items.length - 1])) : null,
  };
}
