/** JSON parsing (`src/config/json.ts`): syntax errors located by line and column. */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/errors.ts";
import { parseJson } from "../../src/config/json.ts";
import { parseConfig } from "../../src/config/load.ts";
import { assertSome, problems } from "./helpers.ts";

Deno.test("JSON syntax errors carry line and column", async () => {
  const json = (text: string) => parseConfig(text, { filename: "agent.json", env: {} });
  const lines = await problems(json(`{\n  "agent": {\n    "name": }\n}\n`));
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^agent\.json:3:13: invalid JSON: /);
  const trailing = await problems(json(`{\n  "agent": {"name": "t"},\n}\n`));
  assert.match(trailing[0], /^agent\.json:3:1: /);
  const array = await problems(json(`[1]`));
  assertSome(array, "must be an object");
});

Deno.test("parseJson locates each kind of syntax error", () => {
  const cases: [string, string][] = [
    [`{"a": "\\q"}`, "1:9: invalid JSON: invalid escape sequence"],
    [`{"a": "\\u12G4"}`, "1:9: invalid JSON: invalid \\u escape"],
    [`{"a": "abc`, "1:11: invalid JSON: unterminated string"],
    [`{"a": "x\ny"}`, "1:9: invalid JSON: control character in string"],
    [`{"a" 1}`, `1:6: invalid JSON: unexpected "1", expected ':'`],
    [`{\n  "a": tru}`, `2:8: invalid JSON: unexpected "t", expected a value`],
    [`{"a": 1} x`, `1:10: invalid JSON: unexpected "x" after the end of the document`],
    [``, "1:1: invalid JSON: unexpected end of input, expected a value"],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => parseJson(text, "f.json"), (error) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.messages, [`f.json:${message}`], JSON.stringify(text));
      return true;
    });
  }
  assert.deepEqual(parseJson(`{"a": [1, "\\u00e9", null]}`, "f.json"), { a: [1, "\u00e9", null] });
});
