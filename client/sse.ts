/**
 * A Server-Sent Events reader for the client (no dependency): the frames of a response body as
 * they arrive, following the HTML standard's parsing rules for the fields the server writes
 * (`id`, `event`, `data`, comments), whatever the chunking and line endings.
 */

/** One frame: its `id:` (the stream cursor, absent on frames without one), `event:` and `data:`. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
}

/** The frames of an SSE body, in order; a frame without `data:` lines is no frame. */
export async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let frame: { id?: string; event?: string; data: string[] } = { data: [] };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A line ends at \n, \r\n or \r; a trailing \r may be the first half of \r\n.
      let start = 0;
      for (;;) {
        const at = buffer.slice(start).search(/\r\n|\r|\n/);
        if (at < 0) break;
        const end = start + at;
        if (buffer[end] === "\r" && end + 1 === buffer.length && !done) break;
        const line = buffer.slice(start, end);
        start = end + (buffer.startsWith("\r\n", end) ? 2 : 1);
        if (line === "") {
          if (frame.data.length > 0) {
            yield { id: frame.id, event: frame.event, data: frame.data.join("\n") };
          }
          frame = { data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") frame.data.push(value);
        else if (field === "event") frame.event = value;
        else if (field === "id" && !value.includes("\0")) frame.id = value;
      }
      buffer = buffer.slice(start);
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
