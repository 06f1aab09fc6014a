/**
 * Stream cursors: the SSE `id:` every frame of a run's stream carries, on every protocol, and the
 * `Last-Event-ID` (or `?after=`) a client sends to resume from it.
 *
 * Every event of a run has a sequence number N (1, 2, 3 …). An encoder may write several frames
 * for one event (AG-UI closes open messages before `RUN_FINISHED`): the first frame's id is `N`,
 * the following ones `N.1`, `N.2` … A cursor names the last frame the client holds; a resumed
 * stream delivers every frame after it, in this order (`3.1` comes after `3` and before `4`).
 * Frames an add-on makes up when a stream resumes (AG-UI's snapshots of the thread at the cursor)
 * carry no id, so a cursor never points at them.
 */
import { errors } from "../../errors.ts";

/** A point in a run's stream: the event's sequence number and its frame (0 for the first). */
export interface Cursor {
  /** The event's sequence number in its run. */
  seq: number;
  /** The frame within the event, from 0. */
  part: number;
}

/** The SSE `id:` of frame `part` (from 0) of event `seq`: `N`, then `N.1`, `N.2` … */
export function frameId(seq: number, part: number): string {
  return part === 0 ? `${seq}` : `${seq}.${part}`;
}

/** Whether frame `part` of event `seq` comes after `cursor` (always, without a cursor). */
export function isAfter(seq: number, part: number, cursor: Cursor | undefined): boolean {
  return !cursor || seq > cursor.seq || (seq === cursor.seq && part > cursor.part);
}

const CURSOR = /^(0|[1-9][0-9]{0,14})(?:\.([1-9][0-9]{0,5}))?$/;

/** Parses `N` or `N.k`; null when it is not one. */
export function parseCursor(text: string): Cursor | null {
  const match = CURSOR.exec(text.trim());
  return match ? { seq: Number(match[1]), part: Number(match[2] ?? 0) } : null;
}

/**
 * The cursor of a request: the `Last-Event-ID` header (what a browser's `EventSource` sends when
 * it reconnects, so it wins) or the `after` query parameter; undefined without either. A
 * malformed one is a 422 naming it.
 */
export function requestCursor(
  header: string | undefined,
  query: string | undefined,
): Cursor | undefined {
  for (const [field, value] of [["Last-Event-ID", header], ["after", query]] as const) {
    if (value === undefined || (field === "Last-Event-ID" && value.trim() === "")) continue;
    const cursor = parseCursor(value);
    if (cursor) return cursor;
    throw errors.validation([{
      field,
      errors: [{
        code: "cursor",
        message: "must be the id of a frame of the run's stream: N or N.k (non-negative integers)",
      }],
    }]);
  }
  return undefined;
}

/**
 * What the run stream must deliver for `cursor`: the events after `after` (the cursor's event
 * again when the client may lack some of its frames; only the frames after the cursor are sent).
 */
export function streamAfter(cursor: Cursor): number {
  return Math.max(0, cursor.seq - 1);
}
