/**
 * JavaScript tools in real sandbox processes: emit, state updates, the permission sandbox,
 * timeouts, cancellation and every way a call can fail (always an outcome, never a throw).
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { createJavaScriptTool, denoSandbox } from "../../src/tools/mod.ts";
import { errorText, fixture, recordingContext, spec } from "./helpers.ts";
import { eventually } from "../_kit/mod.ts";

const MODULE = fixture("js_tools.ts");

function jsTool(fn: string | undefined, extra: Record<string, unknown> = {}) {
  return createJavaScriptTool(
    spec(fn ?? "greet", { kind: "javascript", module: MODULE, function: fn, ...extra }),
  );
}

Deno.test("js: emits arrive in order, then the result with a patch state update", async () => {
  const { ctx, events } = recordingContext({ counter: 41 });
  const outcome = await jsTool("progress").call({ task: "index" }, ctx);
  assert.deepEqual(outcome, {
    result: { done: "index" },
    is_error: false,
    state: {
      patch: [
        { op: "replace", path: "/counter", value: 42 },
        { op: "add", path: "/last_task", value: "index" },
      ],
    },
  });
  assert.deepEqual(events, [
    { name: "progress", value: { value: 0, label: "step 0" } },
    { name: "progress", value: { value: 0.5, label: "step 1" } },
    { name: "progress", value: { value: 1, label: "step 2" } },
  ]);
});

Deno.test("js: a state update can replace the whole context", async () => {
  const { ctx } = recordingContext();
  const outcome = await jsTool("replaceContext").call({}, ctx);
  assert.deepEqual(outcome, {
    result: "replaced",
    is_error: false,
    state: { context: { fresh: true, run: "run-1" } },
  });
});

Deno.test("js: a patch that does not apply to the context is a tool error", async () => {
  const { ctx } = recordingContext({ counter: 1 });
  const outcome = await jsTool("badPatch").call({}, ctx);
  assert.equal(outcome.is_error, true);
  assert.equal(outcome.state, undefined);
  assert.match(errorText(outcome.result), /invalid state update.*replace \/missing\/deep/);
});

Deno.test("js: the tool sees its args, a copy of the context and the ids", async () => {
  const context = { nested: { list: [1, 2] } };
  const { ctx } = recordingContext(context);
  const outcome = await jsTool("echoContext").call({ q: "x" }, ctx);
  assert.deepEqual(outcome.result, {
    args: { q: "x" },
    context,
    ids: ["tenant-1", "session-1", "run-1", "call-1"],
  });
});

Deno.test("js: the default export is used when no function is named", async () => {
  const tool = createJavaScriptTool(spec("greet", { kind: "javascript", module: MODULE }));
  const { ctx } = recordingContext();
  assert.deepEqual(await tool.call({ name: "ada" }, ctx), { result: "hello ada", is_error: false });
});

Deno.test("js: the Tool carries the manifest's name, description, parameters, approval", () => {
  const tool = jsTool("progress", {
    description: "reports progress",
    parameters: { type: "object", properties: { task: { type: "string" } } },
    requires_approval: true,
  });
  assert.equal(tool.name, "progress");
  assert.equal(tool.description, "reports progress");
  assert.deepEqual(tool.parameters, {
    type: "object",
    properties: { task: { type: "string" } },
  });
  assert.equal(tool.requires_approval, true);
});

Deno.test("js: net is denied by default and granted per host", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("pong"),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}/`;
    const { ctx } = recordingContext();

    const denied = await jsTool("fetchUrl").call({ url }, ctx);
    assert.equal(denied.is_error, true);
    assert.match(errorText(denied.result), /permission denied/);
    assert.match(errorText(denied.result), /net access/);

    const granted = await jsTool("fetchUrl", {
      permissions: { net: [`127.0.0.1:${server.addr.port}`] },
    }).call({ url }, ctx);
    assert.deepEqual(granted, { result: { status: 200, body: "pong" }, is_error: false });

    // A grant for one port is not a grant for another.
    const other = await jsTool("fetchUrl", { permissions: { net: ["127.0.0.1:1"] } })
      .call({ url }, ctx);
    assert.equal(other.is_error, true);
    assert.match(errorText(other.result), /permission denied/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("js: the module's directory is readable only while loading, unless granted", async () => {
  const { ctx } = recordingContext();
  const denied = await jsTool("readSibling").call({}, ctx);
  assert.equal(denied.is_error, true);
  assert.match(errorText(denied.result), /permission denied.*read access/);

  const granted = await jsTool("readSibling", { permissions: { read: [dirname(MODULE)] } })
    .call({}, ctx);
  assert.deepEqual(granted, { result: "sibling data", is_error: false });
});

Deno.test("js: env, run and remote imports are denied", async () => {
  const { ctx } = recordingContext();
  const env = await jsTool("readEnv").call({ name: "HOME" }, ctx);
  assert.match(errorText(env.result), /permission denied.*env access/);

  const run = await jsTool("runCommand").call({}, ctx);
  assert.match(errorText(run.result), /permission denied.*run access/);

  // Even with every net host granted, remote code does not load.
  const remote = await jsTool("importRemote", { permissions: { net: true } }).call({}, ctx);
  assert.match(errorText(remote.result), /permission denied.*import access/);

  const envGranted = await jsTool("readEnv", { permissions: { env: ["AGENTD_TOOL_TEST"] } })
    .call({ name: "AGENTD_TOOL_TEST" }, ctx);
  assert.deepEqual(envGranted.result, { value: null });
});

Deno.test("js: sandbox permissions: module dir added and revoked, grants kept", () => {
  const base = spec("t", { kind: "javascript", module: MODULE });
  const dir = dirname(MODULE);
  // Nothing but reading the module's directory, which the bootstrap revokes once it has loaded.
  assert.deepEqual(denoSandbox(base), { flags: [`--allow-read=${dir}`], revoke_read: [dir], dir });
  const parent = denoSandbox(spec("t", {
    kind: "javascript",
    module: MODULE,
    permissions: { read: [dirname(dir)], net: ["example.com:443"], env: ["A", "B"] },
  }));
  assert.deepEqual(parent.flags, [
    `--allow-read=${dirname(dir)}`,
    "--allow-net=example.com:443",
    "--allow-env=A,B",
  ]);
  assert.deepEqual(parent.revoke_read, []);
  const all = denoSandbox(spec("t", {
    kind: "javascript",
    module: MODULE,
    permissions: { read: true, write: true },
  }));
  assert.deepEqual(all.flags, ["--allow-read", "--allow-write"]);
  assert.deepEqual(all.revoke_read, []);
});

Deno.test("js: a tool stuck in a loop is terminated at its timeout", async () => {
  const { ctx } = recordingContext();
  const started = performance.now();
  const outcome = await jsTool("spin", { timeout: 300 }).call({}, ctx);
  const elapsed = performance.now() - started;
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /timed out after 300 ms/);
  assert.ok(elapsed < 300 + 1500, `took ${elapsed} ms`);
});

Deno.test("js: aborting the run's signal stops the tool", async () => {
  const { ctx, events, controller } = recordingContext();
  const call = jsTool("slow").call({}, ctx);
  // Abort once the tool is running (it emits on start).
  await eventually(() => events.length > 0, { interval: 5, what: "the tool to start" });
  const started = performance.now();
  controller.abort();
  const outcome = await call;
  assert.ok(performance.now() - started < 500);
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /cancelled/);

  const already = await jsTool("slow").call({}, ctx);
  assert.match(errorText(already.result), /cancelled before the tool started/);
});

Deno.test("js: results JSON cannot carry faithfully are tool errors", async () => {
  const { ctx } = recordingContext();
  const cases: [string, RegExp][] = [
    ["returnsDate", /result\.when is a Date/],
    ["returnsMap", /result is a Map/],
    ["returnsFunction", /result\.f is a function/],
    ["returnsNaN", /result\[1\] is NaN/],
  ];
  for (const [fn, pattern] of cases) {
    const outcome = await jsTool(fn).call({}, ctx);
    assert.equal(outcome.is_error, true, fn);
    assert.match(errorText(outcome.result), /not JSON-serializable/, fn);
    assert.match(errorText(outcome.result), pattern, fn);
  }
  assert.deepEqual(await jsTool("returnsNothing").call({}, ctx), { result: null, is_error: false });
});

Deno.test("js: emit refuses a value that is not JSON, in the tool", async () => {
  const { ctx, events } = recordingContext();
  const outcome = await jsTool("emitsBadValue").call({}, ctx);
  assert.match(String(outcome.result), /^refused: emit: value is not JSON-serializable/);
  assert.deepEqual(events, []);
});

Deno.test("js: a missing export, a throw, a stray rejection, a forged message", async () => {
  const { ctx } = recordingContext();
  const missing = await jsTool("nope").call({}, ctx);
  assert.equal(missing.is_error, true);
  assert.match(errorText(missing.result), /no export named 'nope' \(it exports: .*progress/);

  const thrown = await jsTool("fails").call({}, ctx);
  assert.deepEqual(thrown, {
    result: "RangeError: the tool failed on purpose",
    is_error: true,
  });

  const stray = await jsTool("unhandled").call({}, ctx);
  assert.equal(stray.is_error, true);
  assert.match(errorText(stray.result), /stray rejection/);

  const forged = await jsTool("forges").call({}, ctx);
  assert.equal(forged.is_error, true);
  assert.match(errorText(forged.result), /not part of the protocol/);

  const reserved = await jsTool("reservedKey").call({}, ctx);
  assert.match(errorText(reserved.result), /reserved key '\$agentd'/);
});

Deno.test("js: a module that does not exist is an outcome, not a throw", async () => {
  const tool = createJavaScriptTool(
    spec("ghost", { kind: "javascript", module: fixture("does_not_exist.ts") }),
  );
  const { ctx } = recordingContext();
  const outcome = await tool.call({}, ctx);
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /could not be loaded/);
});

Deno.test("js: concurrent calls are isolated", async () => {
  const tool = jsTool("progress");
  const calls = [1, 2, 3, 4].map((n) => {
    const { ctx, events } = recordingContext({ counter: n * 10 });
    return tool.call({ task: `t${n}` }, ctx).then((o) => ({ o, events, n }));
  });
  for (const { o, events, n } of await Promise.all(calls)) {
    assert.equal(o.is_error, false);
    assert.deepEqual(o.state, {
      patch: [
        { op: "replace", path: "/counter", value: n * 10 + 1 },
        { op: "add", path: "/last_task", value: `t${n}` },
      ],
    });
    assert.equal(events.length, 3);
  }
});
