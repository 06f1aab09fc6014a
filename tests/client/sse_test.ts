/**
 * The client's SSE reader: frames whatever the chunking and line endings, multi-line data,
 * comments, and the field rules of the HTML standard the server's frames rely on.
 */
import assert from "node:assert/strict";
import { readFrames, type SseFrame } from "../../client/sse.ts";
import { parseSse } from "../_kit/mod.ts";

async function framesOf(chunks: string[]): Promise<SseFrame[]> {
  const bytes = chunks.map((c) => new TextEncoder().encode(c));
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const b of bytes) controller.enqueue(b);
      controller.close();
    },
  });
  const out: SseFrame[] = [];
  for await (const frame of readFrames(body)) out.push(frame);
  return out;
}

const TEXT = ': keep-alive\n\nretry: 1000\n\nid: 1\nevent: run_started\ndata: {"a":1}\n\n' +
  "id: 2.1\nevent: x\ndata: line one\ndata: line two\n\ndata:no space\n\n: ended\n\n";

Deno.test("client sse: the frames of a body, as the kit's parser reads them", async () => {
  const expected = parseSse(TEXT).events.map(({ id, event, data }) => ({ id, event, data }));
  assert.deepEqual(await framesOf([TEXT]), expected);
  assert.deepEqual(expected.map((f) => f.data), ['{"a":1}', "line one\nline two", "no space"]);
});

Deno.test("client sse: any chunking, CRLF and CR line endings", async () => {
  const whole = await framesOf([TEXT]);
  // Every split point, one byte at a time, and other line endings give the same frames.
  assert.deepEqual(await framesOf([...TEXT]), whole);
  for (let at = 0; at < TEXT.length; at++) {
    assert.deepEqual(await framesOf([TEXT.slice(0, at), TEXT.slice(at)]), whole, `split ${at}`);
  }
  const crlf = TEXT.replaceAll("\n", "\r\n");
  assert.deepEqual(await framesOf([...crlf]), whole);
  assert.deepEqual(await framesOf([TEXT.replaceAll("\n", "\r")]), whole);
});

Deno.test("client sse: an unterminated last frame is no frame; multi-byte text intact", async () => {
  const text = "data: héllo ✓\n\ndata: cut";
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Split inside the multi-byte characters.
      for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.slice(i, i + 3));
      controller.close();
    },
  });
  const out: SseFrame[] = [];
  for await (const frame of readFrames(body)) out.push(frame);
  assert.deepEqual(out, [{ id: undefined, event: undefined, data: "héllo ✓" }]);
});
