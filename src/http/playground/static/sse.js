/**
 * Server-Sent Events read from a `fetch` response (`EventSource` cannot send a POST body or
 * headers). Parsed by the WHATWG rules: `data:` lines joined, `id:` kept, comments (keep-alives)
 * skipped, any line ending. Each event comes with the `id:` of its frame, the run's sequence
 * number: a reader that keeps the last one can resume the stream from there (`Last-Event-ID`).
 */

/**
 * Yields `{ id, event }` for each frame of an event stream whose data is JSON (`id` is the frame's
 * `id:` or the last one seen before, null without any). Cancels the body when the caller stops.
 */
export async function* readEvents(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data = [];
  let id = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      let text = buffer + (done ? decoder.decode() : decoder.decode(value, { stream: true }));
      // A trailing "\r" may be the first half of a "\r\n": keep it with the unfinished line.
      const held = !done && text.endsWith("\r") ? "\r" : "";
      if (held) text = text.slice(0, -1);
      const lines = text.split(/\r\n|\r|\n/);
      buffer = done ? "" : lines.pop() + held;
      for (const line of lines) {
        if (line === "") {
          const event = data.length > 0 ? parse(data.join("\n")) : undefined;
          data = [];
          if (event !== undefined) yield { id, event };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "data") data.push(text);
        else if (field === "id" && !text.includes("\0")) id = text;
      }
      if (done) break;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The JSON of a frame's data, or undefined when it is not JSON (such a frame is skipped). */
function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
