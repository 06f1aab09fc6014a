/**
 * The Python runner on its own: the file compiles (`python3 -m py_compile`, the check `deno task
 * check` cannot make), and it takes the state marker from its configuration, since as embedded
 * text it is given everything on its command line. The runner's behaviour in calls is tested
 * through the tool in ../python_tool_test.ts.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { SandboxProcess } from "../../../src/tools/host/process.ts";
import { PYTHON_RUNNER_SOURCE } from "../../../src/tools/host/sources.ts";
import {
  probeInterpreter,
  pythonEnv,
  WITH_STATE_KEY,
  WITH_STATE_TAG,
} from "../../../src/tools/mod.ts";
import { pythonHostSpec } from "../../../src/tools/python_tool.ts";
import { tempDir } from "../../_kit/mod.ts";
import { fixture, spec } from "../helpers.ts";

const RUNNER = fileURLToPath(new URL("../../../src/tools/host/python_runner.py", import.meta.url));

Deno.test("python runner: the file compiles, and it is what agentd embeds", async () => {
  await using cache = await tempDir("agentd_pyc_");
  const out = await new Deno.Command("python3", {
    args: ["-m", "py_compile", RUNNER],
    // The bytecode goes to a temporary directory, not next to the source.
    env: { PYTHONPYCACHEPREFIX: cache.path },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.equal(PYTHON_RUNNER_SOURCE, await Deno.readTextFile(RUNNER));
});

Deno.test("python runner: the state marker comes from its configuration", async () => {
  const tool = spec("replace_context", {
    kind: "python",
    module: fixture("py_tools.py"),
    function: "replace_context",
    sandbox: "none",
  });
  const runtime = await probeInterpreter("python3", pythonEnv(tool));
  const host = pythonHostSpec(tool, runtime, { python: "python3", stderrTail: 2000 });
  const config = JSON.parse(host.args.at(-1)!);
  assert.deepEqual(config.with_state, { key: WITH_STATE_KEY, tag: WITH_STATE_TAG });
  config.with_state = { key: "$other", tag: "tagged" };
  const process = new SandboxProcess({
    ...host,
    args: [...host.args.slice(0, -1), JSON.stringify(config)],
  });
  const request = { args: {}, context: {}, run_id: "run-1" };
  const end = await process.call(
    request,
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
