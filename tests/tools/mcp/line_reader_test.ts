/**
 * The framing of a stdio MCP server's output: lines across chunks, and a line over the cap kept
 * only by its edges, with the id of the request it answers.
 */
import assert from "node:assert/strict";
import { LineReader } from "../../../src/tools/mcp/line_reader.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("line reader: lines across chunks, CRLF, several lines in one chunk", () => {
  const reader = new LineReader(1024);
  assert.deepEqual(reader.push(bytes('{"a":')), []);
  assert.deepEqual(reader.push(bytes('1}\r\n{"b":2}\n{"c"')), [
    { kind: "line", text: '{"a":1}' },
    { kind: "line", text: '{"b":2}' },
  ]);
  assert.deepEqual(reader.push(bytes(":3}\n")), [{ kind: "line", text: '{"c":3}' }]);
  // A multi-byte character split between chunks is decoded whole.
  const e = bytes('"é"\n');
  assert.deepEqual(reader.push(e.subarray(0, 2)), []);
  assert.deepEqual(reader.push(e.subarray(2)), [{ kind: "line", text: '"é"' }]);
});

Deno.test("line reader: a line over the cap is not kept; its id is found at either end", () => {
  const reader = new LineReader(100);
  const body = "x".repeat(1000);
  // The SDK's servers put the id last ({result, jsonrpc, id}).
  const last = reader.push(bytes(`{"result":{"text":"${body}"},"jsonrpc":"2.0","id":7}\n`));
  assert.equal(last.length, 1);
  assert.equal(last[0].kind, "too_large");
  assert.deepEqual(last[0], { kind: "too_large", bytes: 1045, id: 7 });
  // Others put it first; in pieces, the line still ends where its newline is.
  const line = `{"jsonrpc":"2.0","id":"r-1","result":{"text":"${body}"}}`;
  for (let i = 0; i < line.length; i += 64) {
    assert.deepEqual(reader.push(bytes(line.slice(i, i + 64))), []);
  }
  const first = reader.push(bytes('\n{"ok":true}\n'));
  assert.deepEqual(first[0], { kind: "too_large", bytes: line.length, id: "r-1" });
  assert.deepEqual(first[1], { kind: "line", text: '{"ok":true}' }, "the next line is read");
  // No id anywhere (a notification): null.
  const notice = reader.push(bytes(`{"method":"log","params":{"t":"${body}"}}\n`));
  assert.deepEqual(notice, [{ kind: "too_large", bytes: body.length + 34, id: null }]);
});
