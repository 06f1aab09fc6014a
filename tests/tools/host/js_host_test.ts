/**
 * The JavaScript tool process's bootstrap on its own (the `deno` CLI running it as a data: URL,
 * no pool): it takes everything it needs from its configuration, the state marker included,
 * since as embedded text it can import nothing. The runner's behaviour in calls is tested through
 * the tool in ../javascript_tool_test.ts.
 */
import assert from "node:assert/strict";
import { javaScriptHostSpec } from "../../../src/tools/javascript_tool.ts";
import { SandboxProcess } from "../../../src/tools/host/process.ts";
import { JS_HOST_SOURCE, JS_HOST_URL } from "../../../src/tools/host/sources.ts";
import { WITH_STATE_KEY, WITH_STATE_TAG } from "../../../src/tools/mod.ts";
import { fixture, spec } from "../helpers.ts";

const REQUEST = {
  args: {},
  context: {},
  tenant_id: "tenant-1",
  session_id: "session-1",
  run_id: "run-1",
  tool_call_id: "call-1",
};

Deno.test("js host: the embedded bootstrap is the checked file", async () => {
  const file = await Deno.readTextFile(
    new URL("../../../src/tools/host/js_host.ts", import.meta.url),
  );
  assert.equal(JS_HOST_SOURCE, file);
  assert.ok(
    javaScriptHostSpec(spec("t", { kind: "javascript", module: fixture("js_tools.ts") }), "deno")
      .args
      .includes(JS_HOST_URL),
  );
});

Deno.test("js host: the state marker comes from its configuration", async () => {
  const tool = spec("replaceContext", {
    kind: "javascript",
    module: fixture("js_tools.ts"),
    function: "replaceContext",
  });
  const host = javaScriptHostSpec(tool, Deno.execPath());
  const config = JSON.parse(host.args.at(-1)!);
  assert.deepEqual(config.with_state, { key: WITH_STATE_KEY, tag: WITH_STATE_TAG });
  config.with_state = { key: "$other", tag: "tagged" };
  const process = new SandboxProcess({
    ...host,
    args: [...host.args.slice(0, -1), JSON.stringify(config)],
  });
  const end = await process.call(
    REQUEST,
    { emit() {}, signal: new AbortController().signal },
    30_000,
  );
  assert.deepEqual(end, {
    kind: "result",
    value: {
      $other: "tagged",
      result: "replaced",
      state: { context: { fresh: true, run: "run-1" } },
    },
  });
});
