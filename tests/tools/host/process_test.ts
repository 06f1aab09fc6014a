/**
 * The server's end of a tool process (`SandboxProcess`), driven by small `/bin/sh` runners that
 * speak the protocol: results and emits, every way a process can end, and the limits the server
 * enforces whatever the runner does.
 */
import assert from "node:assert/strict";
import { SandboxProcess } from "../../../src/tools/host/process.ts";
import type { HostCallContext, HostSpec } from "../../../src/tools/host/protocol.ts";
import { eventually } from "../../_kit/mod.ts";

/** A protocol line as a runner writes it (printf format: `\036` is the record separator). */
const line = (json: string) => `printf '\\n\\036%s\\n' '${json}'`;
const READY = line('{"type":"ready"}');

/** A process running `script` under /bin/sh. */
function shProcess(script: string, spec: Partial<HostSpec> = {}): SandboxProcess {
  return new SandboxProcess({
    command: "/bin/sh",
    args: ["-c", script],
    env: { PATH: "/usr/bin:/bin" },
    cwd: "/",
    group: false,
    strict: true,
    load_timeout: 30_000,
    limits: { result_bytes: 1000, emits: 10, emit_bytes: 1000 },
    output_tail: 2000,
    ...spec,
  });
}

/** A call context recording emits; `onEmit` may act on each. */
function callContext(onEmit: (name: string) => void = () => {}) {
  const events: { name: string; value: unknown }[] = [];
  const controller = new AbortController();
  const ctx: HostCallContext = {
    emit: (name, value) => {
      events.push({ name, value });
      onEmit(name);
    },
    signal: controller.signal,
  };
  return { ctx, events, controller };
}

const REQUEST = { args: { n: 1 }, context: null };

Deno.test("process: the request goes in, emits and the result come out in order", async () => {
  const process = shProcess(
    `${READY}; read -r request; ${line('{"type":"emit","name":"a","value":1}')}; ` +
      `${line('{"type":"emit","name":"b","value":2}')}; ` +
      `printf '\\n\\036{"type":"result","value":%s}\\n' "$request"`,
  );
  await process.ready;
  const { ctx, events } = callContext();
  assert.deepEqual(await process.call(REQUEST, ctx, 30_000), { kind: "result", value: REQUEST });
  assert.deepEqual(events, [{ name: "a", value: 1 }, { name: "b", value: 2 }]);
});

Deno.test("process: an error instead of ready is a load error", async () => {
  const process = shProcess(`${line('{"type":"error","error":"no module"}')}; sleep 30`);
  const end = await process.call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(end, {
    kind: "error",
    message: "no module",
    stage: "load",
    permission: false,
    output: "",
  });
});

Deno.test("process: stray stdout is a protocol error when strict, output when not", async () => {
  const script = `${READY}; read -r request; echo hello; exit 3`;
  const strict = await shProcess(script).call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(strict, { kind: "protocol", line: "hello", output: "" });
  const loose = await shProcess(`${script}; echo never`, { strict: false })
    .call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(loose, { kind: "exit", code: 3, signal: null, output: "hello\n" });
});

Deno.test("process: a line that is not a message, or one before the request, ends it", async () => {
  const garbage = await shProcess(`${READY}; read -r request; ${line("{nope")}; sleep 30`)
    .call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(garbage, { kind: "protocol", line: "{nope", output: "" });

  const early = shProcess(`${READY}; ${line('{"type":"emit","name":"a","value":1}')}; sleep 30`);
  await loadedThenEnded(early);
  const end = await early.call(REQUEST, callContext().ctx, 30_000);
  assert.equal(end.kind, "protocol");
});

/** Waits until a process has loaded and then ended on its own (it is no longer usable). */
async function loadedThenEnded(process: SandboxProcess): Promise<void> {
  await process.ready;
  await eventually(() => !process.usable, { what: "the process to end before its call" });
}

Deno.test("process: the server's limits hold whatever the runner sends", async () => {
  const emits = Array.from({ length: 3 }, () => line('{"type":"emit","name":"a","value":1}'));
  const tooMany = await shProcess(`${READY}; read -r r; ${emits.join("; ")}; sleep 30`, {
    limits: { result_bytes: 1000, emits: 2, emit_bytes: 1000 },
  }).call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(tooMany, {
    kind: "limit",
    message: "the tool sent more than 2 live events (limits.emits)",
    output: "",
  });

  const big = `"${"x".repeat(200)}"`;
  const large = await shProcess(
    `${READY}; read -r r; ${line(`{"type":"result","value":${big}}`)}`,
    {
      limits: { result_bytes: 100, emits: 2, emit_bytes: 100 },
    },
  ).call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(large, {
    kind: "limit",
    message: "the result is larger than 100 bytes (limits.result_bytes)",
    output: "",
  });

  // A protocol line longer than any message may be is cut off while it is read.
  const endless = await shProcess(
    `${READY}; read -r r; printf '\\n\\036'; head -c 100000 /dev/zero | tr '\\0' x; sleep 30`,
    { limits: { result_bytes: 100, emits: 2, emit_bytes: 100 } },
  ).call(REQUEST, callContext().ctx, 30_000);
  assert.equal(endless.kind, "limit");
  assert.match((endless as { message: string }).message, /more than 4196 bytes/);
});

Deno.test("process: a load timeout, a call timeout and a cancel stop the process", async () => {
  const loading = await shProcess("sleep 30", { load_timeout: 100 })
    .call(REQUEST, callContext().ctx, 30_000);
  assert.deepEqual(loading, { kind: "timeout", loading: true, output: "" });

  const calling = await shProcess(`${READY}; read -r r; sleep 30`)
    .call(REQUEST, callContext().ctx, 100);
  assert.deepEqual(calling, { kind: "timeout", loading: false, output: "" });

  const started = line('{"type":"emit","name":"started","value":null}');
  const { ctx, controller } = callContext(() => controller.abort());
  const cancelled = await shProcess(`${READY}; read -r r; ${started}; sleep 30`)
    .call(REQUEST, ctx, 30_000);
  assert.deepEqual(cancelled, { kind: "cancelled" });
});

Deno.test("process: a program that cannot start, and a process closed before its call", async () => {
  const missing = await shProcess("", { command: "/nonexistent/runner" })
    .call(REQUEST, callContext().ctx, 30_000);
  assert.equal(missing.kind, "spawn_failed");

  const closed = shProcess(`${READY}; read -r r; sleep 30`);
  await closed.ready;
  await closed.close();
  assert.deepEqual(await closed.call(REQUEST, callContext().ctx, 30_000), { kind: "closed" });
});
