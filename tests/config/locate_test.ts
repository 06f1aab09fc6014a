/** Placing a manifest problem: the path of its subject walked through HCL and JSON text. */
import assert from "node:assert/strict";
import { locate, locateMessages, subjectPath } from "../../src/config/locate.ts";

const HCL = `# model { timeout = 1 } in a comment
agent {
  name = "x"
  model {
    timeout = "soon"
  }
}
tool "add" {
  function = "addd"
}
`;

const JSON_TEXT = `{
  "agent": { "name": "x", "model": { "timeout": "soon" } },
  "tool": { "add": { "function": "addd" } }
}`;

Deno.test("locate walks the path's names in HCL and JSON, skipping comments", () => {
  assert.deepEqual(locate(HCL, ["agent", "model", "timeout"]), { line: 5, col: 5 });
  assert.deepEqual(locate(HCL, ["tool", "add", "function"]), { line: 9, col: 3 });
  assert.deepEqual(locate(JSON_TEXT, ["agent", "model", "timeout"]), { line: 2, col: 38 });
  assert.deepEqual(locate(JSON_TEXT, ["tool", "add", "function"]), { line: 3, col: 22 });
  // A name that is not there leaves the place of its block.
  assert.deepEqual(locate(HCL, ["agent", "model", "retry"]), { line: 4, col: 3 });
  assert.equal(locate(HCL, ["runtime"]), undefined);
});

Deno.test("a message's subject: a dotted path, or a tool and the attribute it names", () => {
  assert.deepEqual(subjectPath("agent.model.timeout: expected number"), [
    "agent",
    "model",
    "timeout",
  ]);
  assert.deepEqual(subjectPath("capability.a.tools.2: unknown tool"), ["capability", "a", "tools"]);
  assert.deepEqual(subjectPath(`tool 'add': function "addd": no export`), [
    "tool",
    "add",
    "function",
  ]);
  assert.deepEqual(subjectPath("tool 'add': module file not found: ./x.js"), [
    "tool",
    "add",
    "module",
  ]);
  assert.deepEqual(subjectPath("tool 'add': permissions.net of a python tool"), [
    "tool",
    "add",
    "permissions",
    "net",
  ]);
  assert.equal(subjectPath("unknown environment variable AGENT__X"), undefined);
});

Deno.test("locateMessages places what it can and leaves environment values alone", () => {
  assert.deepEqual(
    locateMessages("agent.hcl", HCL, [
      "agent.model.timeout: expected number, received string",
      "runtime.pubsub.kind: invalid option (value from AGENT__PUBSUB__KIND)",
      "agent.hcl:3:1: already placed",
    ]),
    [
      "agent.hcl:5:5: agent.model.timeout: expected number, received string",
      "runtime.pubsub.kind: invalid option (value from AGENT__PUBSUB__KIND)",
      "agent.hcl:3:1: already placed",
    ],
  );
});
