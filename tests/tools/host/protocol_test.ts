/**
 * The protocol messages a tool process may send: what parses as one, and what is refused.
 */
import assert from "node:assert/strict";
import { parseMessage, WITH_STATE_MARKER } from "../../../src/tools/host/protocol.ts";
import { WITH_STATE_KEY, WITH_STATE_TAG } from "../../../src/tools/mod.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("protocol: the four messages parse", () => {
  assert.deepEqual(parseMessage(bytes('{"type":"ready"}')), { type: "ready" });
  assert.deepEqual(parseMessage(bytes('{"type":"emit","name":"n","value":null}')), {
    type: "emit",
    name: "n",
    value: null,
  });
  assert.deepEqual(parseMessage(bytes('{"type":"result","value":[1]}')), {
    type: "result",
    value: [1],
  });
  assert.deepEqual(parseMessage(bytes('{"type":"error","error":"e","stage":"load"}')), {
    type: "error",
    error: "e",
    stage: "load",
  });
});

Deno.test("protocol: anything else is not a message", () => {
  for (
    const text of [
      "not json",
      "null",
      "[1]",
      '"ready"',
      '{"type":"hello"}',
      '{"type":"emit","value":1}', // no name
      '{"type":"emit","name":"n"}', // no value
      '{"type":"result"}', // no value
      '{"type":"error","error":3}',
      "",
    ]
  ) {
    assert.equal(parseMessage(bytes(text)), null, text);
  }
});

Deno.test("protocol: the runners' state marker is the library's", () => {
  assert.deepEqual(WITH_STATE_MARKER, { key: WITH_STATE_KEY, tag: WITH_STATE_TAG });
});
