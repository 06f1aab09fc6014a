/**
 * The native encoder: a run's event stream as the `/v1` SSE frames, `id: <seq>`, `event: <kind>`
 * and the event as JSON (its wire form, `encodeEvent`, shared with the pub/sub message). The
 * add-ons' counterparts are AG-UI's `agUiFrames`, A2A's `a2aFrames` and the AI SDK's `aiSdkFrames`,
 * each in its protocol's `encoder.ts`; all take the run's stream items (all but `aiSdkFrames`, whose
 * client resumes by replay, a cursor to resume after too).
 */
import { encodeEvent, type RunStreamItem } from "../../api/events.ts";
import {
  type Cursor,
  frameId,
  isAfter,
  sseComment,
  type SsePiece,
  sseSharedFrame,
} from "../kit/mod.ts";

/** Options of a native stream. */
export interface NativeFramesOptions {
  /** The client's cursor: frames at or before it are skipped (the client has them). */
  cursor?: Cursor;
}

/**
 * Native SSE frames of a run's stream: `id: <seq>`, `event: <kind>` and the event as JSON; frames
 * at or before the cursor are skipped (the client has them). An end notice is a comment;
 * timestamps never go backwards within the stream. A long event's JSON goes out as bytes shared
 * with every stream writing the same event (`sseSharedFrame`: a resumed snapshot).
 */
export async function* nativeFrames(
  items: AsyncIterable<RunStreamItem>,
  options: NativeFramesOptions = {},
): AsyncGenerator<SsePiece> {
  const cursor = options.cursor;
  let timestamp = 0;
  for await (const item of items) {
    if ("notice" in item) {
      yield sseComment(`stream ended: ${item.notice}`);
      continue;
    }
    if (item.seq !== null && !isAfter(item.seq, 0, cursor)) continue;
    let event = item.event;
    if (event.timestamp < timestamp) event = { ...event, timestamp };
    timestamp = event.timestamp;
    const id = item.seq === null ? undefined : frameId(item.seq, 0);
    yield sseSharedFrame(event, encodeEvent(event), event.kind, id);
  }
}
