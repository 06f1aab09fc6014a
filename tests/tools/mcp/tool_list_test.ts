/**
 * Which of a server's listed tools are offered, under which name, with which argument check; and
 * the allowlisted names the server does not offer.
 */
import assert from "node:assert/strict";
import { createLogger } from "../../../src/log.ts";
import { offeredTools } from "../../../src/tools/mcp/tool_list.ts";

function logger() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger("debug", {}, (line) => lines.push(JSON.parse(line)));
  return { log, lines };
}

const schema = (properties: Record<string, object>) => ({ type: "object" as const, properties });

Deno.test("tool list: every tool when there is no allowlist, named for the model", () => {
  const { log } = logger();
  const { offered, missing } = offeredTools(
    "srv",
    [
      { name: "echo", inputSchema: schema({ text: { type: "string" } }) },
      { name: "look.up", inputSchema: schema({}) },
    ],
    undefined,
    log,
  );
  assert.deepEqual(missing, []);
  const names = [...offered.keys()];
  assert.equal(names[0], "srv__echo");
  assert.match(names[1], /^srv__look_up_[0-9a-f]{8}$/);
  assert.equal(offered.get("srv__echo")!.tool.name, "echo");
  const { validate } = offered.get("srv__echo")!;
  assert.equal(validate({ text: "hi" })?.valid, true);
  assert.equal(validate({ text: 1 })?.valid, false);
});

Deno.test("tool list: the allowlist narrows the tools and names what is missing", () => {
  const { log } = logger();
  const { offered, missing } = offeredTools(
    "srv",
    [
      { name: "a", inputSchema: schema({}) },
      { name: "b", inputSchema: schema({}) },
    ],
    ["b", "c"],
    log,
  );
  assert.deepEqual([...offered.keys()], ["srv__b"]);
  assert.deepEqual(missing, ["c"]);
});

Deno.test("tool list: a schema that does not compile leaves the tool unchecked, with a warning", () => {
  const { log, lines } = logger();
  const { offered } = offeredTools(
    "srv",
    [
      { name: "odd", inputSchema: { type: "object", properties: { x: { type: "no-such-type" } } } },
    ],
    undefined,
    log,
  );
  // Compiled at the first call: the arguments go unchecked from then on.
  assert.equal(offered.get("srv__odd")!.validate({ x: 1 }), null);
  assert.ok(
    lines.some((l) =>
      l.msg === "mcp tool input schema does not compile; arguments go unchecked" && l.tool === "odd"
    ),
    JSON.stringify(lines),
  );
});
