/**
 * Python tools as real subprocesses: emit, state updates, crashes, exits, hangs (the process
 * group is killed and reaped), stdout noise, garbage on the protocol stream, environment.
 */
import assert from "node:assert/strict";
import { basename, isAbsolute } from "node:path";
import {
  createPythonTool,
  pythonEnv,
  type PythonToolOptions,
  realInterpreter,
} from "../../src/tools/mod.ts";
import {
  errorText,
  fixture,
  isRunning,
  markedCount,
  newMarker,
  noneMarked,
  recordingContext,
  spec,
} from "./helpers.ts";
import { eventually } from "../_kit/mod.ts";

const MODULE = fixture("py_tools.py");

function pyTool(fn: string, extra: Record<string, unknown> = {}, options?: PythonToolOptions) {
  return createPythonTool(
    spec(fn, { kind: "python", module: MODULE, function: fn, ...extra }),
    options,
  );
}

/** Waits until a process has stopped running (SIGKILL of a process group takes effect async). */
function stopsRunning(pid: number, within = 1000): Promise<boolean> {
  return eventually(() => !isRunning(pid), { timeout: within, interval: 10 })
    .then(() => true, () => false);
}

/** Whether a pid exists at all for us to signal (our own reaped child: it does not). */
function canSignal(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("python: emits arrive in order, then the result with a patch", async () => {
  const { ctx, events } = recordingContext({ counter: 7 });
  const outcome = await pyTool("success").call({ text: "one two three" }, ctx);
  assert.deepEqual(outcome, {
    result: { words: 3 },
    is_error: false,
    state: { patch: [{ op: "replace", path: "/counter", value: 8 }] },
  });
  assert.deepEqual(events, [
    { name: "progress", value: 0 },
    { name: "progress", value: { value: 1, words: 3 } },
  ]);
});

Deno.test("python: a whole new context; a patch that does not apply is an error", async () => {
  const { ctx } = recordingContext();
  assert.deepEqual(await pyTool("replace_context").call({}, ctx), {
    result: "replaced",
    is_error: false,
    state: { context: { fresh: true, run: "run-1" } },
  });
  const bad = await pyTool("bad_patch").call({}, ctx);
  assert.equal(bad.is_error, true);
  assert.equal(bad.state, undefined);
  assert.match(errorText(bad.result), /invalid state update.*remove \/nope/);
});

Deno.test("python: args, context and ids reach the function; async functions are awaited", async () => {
  const { ctx } = recordingContext({ deep: { list: [1, "two", null] } });
  assert.deepEqual((await pyTool("echo").call({ q: "é ✓" }, ctx)).result, {
    args: { q: "é ✓" },
    context: { deep: { list: [1, "two", null] } },
    ids: ["tenant-1", "session-1", "run-1", "call-1"],
  });
  assert.deepEqual(await pyTool("async_tool").call({}, ctx), {
    result: { async: true },
    is_error: false,
  });
});

Deno.test("python: an exception is an error with the exception and stderr", async () => {
  const { ctx } = recordingContext();
  const outcome = await pyTool("crash").call({}, ctx);
  assert.equal(outcome.is_error, true);
  const message = errorText(outcome.result);
  assert.match(message, /^ValueError: the tool failed on purpose/);
  assert.match(message, /--- stderr \(end\) ---/);
  assert.match(message, /about to fail/);
  assert.match(message, /Traceback/);
});

Deno.test("python: sys.exit(3) and leaving without a result are errors", async () => {
  const { ctx } = recordingContext();
  const exit = await pyTool("exit3").call({}, ctx);
  assert.equal(exit.is_error, true);
  assert.match(errorText(exit.result), /exited with code 3 before returning a result/);

  const silent = await pyTool("no_result").call({}, ctx);
  assert.equal(silent.is_error, true);
  assert.match(errorText(silent.result), /exited with code 0 before returning a result/);
});

Deno.test("python (no sandbox): a hanging tool is killed at its timeout with its children, and reaped", async () => {
  const { ctx, events } = recordingContext();
  const started = performance.now();
  const outcome = await pyTool("hang", { timeout: 800, sandbox: "none" }).call({}, ctx);
  const elapsed = performance.now() - started;
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /timed out after 800 ms/);
  assert.ok(elapsed < 800 + 1500, `took ${elapsed} ms`);

  const pids = events.find((e) => e.name === "pids")?.value as { runner: number; child: number };
  assert.ok(pids, "the tool reported its pids before hanging");
  // Our child was reaped: its pid no longer exists at all (no zombie left behind).
  assert.equal(canSignal(pids.runner), false, "runner process still exists");
  // The tool's own child was in the process group and got killed too.
  assert.ok(await stopsRunning(pids.child), "the tool's child process still runs");
});

Deno.test("python (no sandbox): a timeout ends the call even when an escaped process holds the pipes", async () => {
  const { ctx, events } = recordingContext();
  const started = performance.now();
  const outcome = await pyTool("escape", { timeout: 500, sandbox: "none" }).call({}, ctx);
  const elapsed = performance.now() - started;
  const escaped = events.find((e) => e.name === "escaped")?.value as number | undefined;
  try {
    assert.match(errorText(outcome.result), /timed out after 500 ms/);
    assert.ok(elapsed < 500 + 1500, `took ${elapsed} ms`);
  } finally {
    // It left the process group on purpose, so the runner could not kill it: this test does.
    if (escaped) Deno.kill(escaped, "SIGKILL");
  }
  assert.ok(escaped, "the tool reported the escaped pid");
});

Deno.test("python (no sandbox): aborting the run's signal kills the process at once", async () => {
  const { ctx, events, controller } = recordingContext();
  const call = pyTool("hang", { sandbox: "none" }).call({}, ctx);
  await eventually(() => events.length > 0, { interval: 10, what: "the tool to start" });
  const pids = events[0].value as { runner: number; child: number };
  const started = performance.now();
  controller.abort();
  const outcome = await call;
  assert.ok(performance.now() - started < 1000);
  assert.equal(outcome.is_error, true);
  assert.match(errorText(outcome.result), /cancelled/);
  assert.equal(canSignal(pids.runner), false);
  assert.ok(await stopsRunning(pids.child), "the tool's child process still runs");

  const already = await pyTool("hang").call({}, ctx);
  assert.match(errorText(already.result), /cancelled before the tool started/);
});

Deno.test("python: in the sandbox, a timeout or a cancel ends every process of the call", async () => {
  // Timeout: the tool's child and a child that left the process group both die with the sandbox.
  const child = newMarker();
  const escaped = newMarker();
  const { ctx, events } = recordingContext();
  const started = performance.now();
  const [hang, escape] = await Promise.all([
    pyTool("hang_marked", { timeout: 1500 }).call({ marker: child }, ctx),
    pyTool("escape_marked", { timeout: 1500 }).call({ marker: escaped }, ctx),
  ]);
  assert.ok(performance.now() - started < 1500 + 1500);
  assert.match(errorText(hang.result), /timed out after 1500 ms/);
  assert.match(errorText(escape.result), /timed out after 1500 ms/);
  assert.equal(events.length, 2, "both tools started their processes");
  assert.ok(await noneMarked(child), "the tool's child outlived the call");
  assert.ok(await noneMarked(escaped), "the escaped process outlived the call");

  // Cancel.
  const marker = newMarker();
  const run = recordingContext();
  const call = pyTool("hang_marked").call({ marker }, run.ctx);
  await eventually(() => run.events.length > 0, { interval: 10, what: "the tool to start" });
  assert.ok(await markedCount(marker, 1), "the tool's child is not running");
  run.controller.abort();
  assert.match(errorText((await call).result), /cancelled/);
  assert.ok(await noneMarked(marker), "the tool's child outlived the cancelled call");
});

Deno.test("python: prints to stdout do not break the protocol", async () => {
  const { ctx } = recordingContext();
  assert.deepEqual(await pyTool("noisy").call({}, ctx), { result: "clean", is_error: false });
});

Deno.test("python (no sandbox): garbage on the protocol stream is an error, and the process is gone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agentd_fake_python_" });
  try {
    // An "interpreter" that ignores the runner and writes something else, then lingers.
    const garbage = `${dir}/garbage`;
    await Deno.writeTextFile(
      garbage,
      "#!/bin/sh\necho $$ >&2\necho 'this is not json'\nsleep 30\n",
    );
    await Deno.chmod(garbage, 0o755);
    const { ctx } = recordingContext();
    const started = performance.now();
    const outcome = await pyTool("success", { sandbox: "none" }, { python: garbage }).call({}, ctx);
    assert.ok(performance.now() - started < 2000);
    assert.equal(outcome.is_error, true);
    const message = errorText(outcome.result);
    assert.match(message, /not the tool protocol: "this is not json"/);
    const pid = Number(message.split("--- stderr (end) ---\n")[1].trim());
    assert.equal(canSignal(pid), false);

    // A half line at the end, then exit.
    const partial = `${dir}/partial`;
    await Deno.writeTextFile(partial, '#!/bin/sh\nprintf \'{"type": "res\'\n');
    await Deno.chmod(partial, 0o755);
    const cut = await pyTool("success", { sandbox: "none" }, { python: partial }).call({}, ctx);
    assert.match(errorText(cut.result), /not the tool protocol/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("python: non-JSON results and emits, missing functions, no interpreter", async () => {
  const { ctx, events } = recordingContext();
  const set = await pyTool("non_json").call({}, ctx);
  assert.equal(set.is_error, true);
  assert.match(errorText(set.result), /result is not JSON-serializable.*set/);

  const emit = await pyTool("bad_emit").call({}, ctx);
  assert.match(String(emit.result), /^refused: .*not JSON serializable/);
  assert.deepEqual(events, []);

  const missing = await pyTool("nope").call({}, ctx);
  assert.match(errorText(missing.result), /no function named 'nope'/);

  const notCallable = await pyTool("not_a_function").call({}, ctx);
  assert.match(errorText(notCallable.result), /'not_a_function' is not callable/);

  const noPython = await pyTool("success", {}, { python: "/nonexistent/python3" }).call({}, ctx);
  assert.match(errorText(noPython.result), /interpreter '\/nonexistent\/python3' was not found/);
});

Deno.test("python: the environment is narrowed to the base set plus permissions.env", async () => {
  Deno.env.set("AGENTD_TOOL_SECRET", "s3cret");
  try {
    const { ctx } = recordingContext();
    const names = ["AGENTD_TOOL_SECRET", "PATH", "PYTHONIOENCODING"];
    const plain = await pyTool("env_probe").call({ names }, ctx);
    const seen = plain.result as Record<string, string | null>;
    assert.equal(seen.AGENTD_TOOL_SECRET, null);
    // (A pyenv shim may prepend its own directories.)
    assert.ok(seen.PATH?.endsWith(Deno.env.get("PATH")!), seen.PATH ?? "no PATH");
    assert.equal(seen.PYTHONIOENCODING, "utf-8");

    const granted = await pyTool("env_probe", { permissions: { env: ["AGENTD_TOOL_SECRET"] } })
      .call({ names }, ctx);
    assert.equal((granted.result as Record<string, string>).AGENTD_TOOL_SECRET, "s3cret");
  } finally {
    Deno.env.delete("AGENTD_TOOL_SECRET");
  }
});

Deno.test("python: the private /tmp is the tool's to write, HOME and TMPDIR with it", async () => {
  // A root server runs the tool as nobody: /tmp was a tmpfs of root's, mode 0755 (issue 27).
  const outcome = await pyTool("scratch").call({}, recordingContext().ctx);
  assert.equal(outcome.is_error, false, JSON.stringify(outcome.result));
  const seen = outcome.result as Record<string, unknown>;
  assert.deepEqual(
    { tmp: seen.tmp, TMPDIR: seen.TMPDIR, HOME: seen.HOME, tempfile: seen.tempfile },
    { tmp: "tmp", TMPDIR: "TMPDIR", HOME: "HOME", tempfile: true },
  );
  if (Deno.uid() === 0) assert.equal(seen.uid, 65534, "a root server runs tools as nobody");
});

Deno.test("python: large results and concurrent calls", async () => {
  const { ctx } = recordingContext();
  const big = await pyTool("big_output", { limits: { result_bytes: 4_000_000 } })
    .call({ size: 2_000_000 }, ctx);
  assert.equal(big.is_error, false);
  assert.equal((big.result as string).length, 2_000_000);

  const tool = pyTool("success");
  const outcomes = await Promise.all(
    [1, 2, 3, 4].map((n) =>
      tool.call({ text: "w ".repeat(n) }, recordingContext({ counter: n }).ctx)
    ),
  );
  outcomes.forEach((o, i) => {
    assert.deepEqual(o.result, { words: i + 1 });
    assert.deepEqual(o.state, { patch: [{ op: "replace", path: "/counter", value: i + 2 }] });
  });

  const small = await pyTool("big_output", { limits: { result_bytes: 1000 } })
    .call({ size: 5000 }, ctx);
  assert.match(
    errorText(small.result),
    /5002 bytes of JSON, more than limits.result_bytes \(1000\)/,
  );
});

for (const sandbox of ["os", "none"]) {
  Deno.test(`python (sandbox ${sandbox}): when the server dies, its tool processes die with it`, async () => {
    const marker = newMarker();
    const host = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-prompt", fixture("orphan_host.ts"), sandbox, marker],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = host.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    const pids = JSON.parse(text.split("\n")[0]) as { runner: number; child: number };
    assert.ok(await markedCount(marker, 1), "the tool's child is not running");
    host.kill("SIGKILL");
    await host.status;
    await reader.cancel();
    if (sandbox === "none") {
      // The runner sees its stdin close and kills its process group.
      assert.ok(await stopsRunning(pids.runner, 3000), "the runner outlived the server");
      assert.ok(await stopsRunning(pids.child, 3000), "the tool's child outlived the server");
    }
    assert.ok(await noneMarked(marker, 3000), "the tool's child outlived the server");
  });
}

Deno.test("python: a command name is resolved once to the interpreter binary", async () => {
  const env = pythonEnv(spec("x", { kind: "python", module: MODULE, function: "echo" }));
  const python = await realInterpreter("python3", env);
  assert.ok(isAbsolute(python), python);
  assert.match(basename(python), /^python/);
  // A path is the operator's choice; a name that is not a Python is left for the call to report.
  assert.equal(await realInterpreter("/usr/bin/python3", env), "/usr/bin/python3");
  assert.equal(await realInterpreter("agentd-no-such-python", env), "agentd-no-such-python");
});
