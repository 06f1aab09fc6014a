/** Reads Server-Sent Events from a fetch response, for tests. */

/** One SSE frame as received. */
export interface Frame {
  event?: string;
  data?: string;
  comment?: string;
}

/** Yields the frames of an SSE response body as they arrive (comments included). */
export async function* readFrames(res: Response): AsyncGenerator<Frame> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: Frame = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) frame.comment = line.slice(1).trim();
          else if (line.startsWith("event: ")) frame.event = line.slice(7);
          else if (line.startsWith("data: ")) frame.data = (frame.data ?? "") + line.slice(6);
        }
        yield frame;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** A parsed native run event. */
export type EventData = Record<string, unknown> & { kind: string };

/** Collects every event frame (comments skipped) until the stream ends. */
export async function readEvents(res: Response): Promise<EventData[]> {
  const out: EventData[] = [];
  for await (const frame of readFrames(res)) {
    if (frame.data !== undefined) out.push(JSON.parse(frame.data));
  }
  return out;
}
