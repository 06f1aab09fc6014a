/** The log line for people: time of day, level, message, fields; a request line said as one. */
import assert from "node:assert/strict";
import { formatText } from "../src/log_text.ts";
import { resolveLogFormat } from "../src/log.ts";

const TIME = new Date(2026, 10, 21, 10, 33, 55, 53).toISOString();

Deno.test("a record is the time of day, the level, the message and key=value fields", () => {
  const line = formatText({
    time: TIME,
    level: "warn",
    msg: "run finished",
    request_id: "4f0c",
    trace_id: "1b54",
    run_id: "r1",
    status: "failed",
    error: "openai/gpt-4o: connection failed",
    tools: ["add", "shout"],
    empty: [],
    nested: { a: 1 },
    gone: undefined,
  }, { colour: false });
  assert.equal(
    line,
    `10:33:55.053 WARN  run finished run_id=r1 status=failed ` +
      `error="openai/gpt-4o: connection failed" tools=add,shout empty=[] nested={"a":1}`,
  );
});

Deno.test("a request line says method, path, status and time", () => {
  const line = formatText({
    time: TIME,
    level: "info",
    msg: "request",
    tenant: "acme",
    method: "POST",
    path: "/v1/runs",
    status: 201,
    ms: 12.3,
  }, { colour: false });
  assert.equal(line, "10:33:55.053 INFO  request POST /v1/runs 201 12.3ms tenant=acme");
});

Deno.test("colours paint the level and the status; a newline in a value stays on one line", () => {
  const line = formatText(
    { time: TIME, level: "error", msg: "request", method: "GET", path: "/x", status: 500 },
    { colour: true },
  );
  assert.ok(line.includes("\x1b[31mERROR"), line);
  assert.ok(line.includes("\x1b[31m500"), line);
  const multi = formatText({ time: TIME, level: "info", msg: "a\nb", x: "c\nd" }, {
    colour: false,
  });
  assert.equal(multi, `10:33:55.053 INFO  a\\nb x="c\\nd"`);
});

Deno.test("auto is text on a terminal and JSON elsewhere; colours only on a terminal", () => {
  assert.deepEqual(resolveLogFormat("auto", false), { format: "json", colour: false });
  assert.deepEqual(resolveLogFormat("text", false), { format: "text", colour: false });
  assert.deepEqual(resolveLogFormat("json", true), { format: "json", colour: false });
  const colour = !Deno.env.get("NO_COLOR");
  assert.deepEqual(resolveLogFormat("auto", true), { format: "text", colour });
});
