/**
 * Python tools: every call runs `python3 -c <runner>` (host/python_runner.py) in a sandbox
 * process of its own (sandbox.ts: bubblewrap, a private file system and `/proc`, as `nobody` under
 * a root server), in its own process group, with its data segment, CPU time and process count
 * limited, and speaks the protocol of host/protocol.ts with it. The process starts before the
 * call (pool.ts). A tool may opt out of the OS sandbox (`sandbox = "none"`): it then runs as the
 * server's user with its file access, only its environment narrowed and its resources limited.
 *
 * Whatever happens (exception, exit, a crash of the interpreter, output that is not the protocol,
 * a timeout, a cancelled run) the call ends with the process group killed, the process reaped
 * and an outcome for the model; `call()` never rejects.
 */
import { isAbsolute, resolve } from "node:path";
import { type HostEnd, type HostSpec, WITH_STATE_MARKER } from "./host/protocol.ts";
import { PYTHON_RUNNER_SOURCE } from "./host/sources.ts";
import { errorMessage, interpretReturn, toolError } from "./outcome.ts";
import { ProcessPool } from "./pool.ts";
import type { ProcessSlots } from "./slots.ts";
import { realDir, sandboxCommand, sandboxHost } from "./sandbox.ts";
import type { ToolSpec } from "./spec.ts";
import type { ManagedTool, ToolCallContext, ToolOutcome } from "./types.ts";

/** Settings of the Python runner shared by all Python tools of a server. */
export interface PythonToolOptions {
  /** The interpreter to run (a name on PATH or a path); default `python3`. */
  python?: string;
  /** How many characters of the process's stderr an error message keeps (the end); default 2000. */
  stderrTail?: number;
  /** The server's bound on tool processes running calls at once (none: unbounded). */
  slots?: ProcessSlots;
}

/** The runner settings a process is started with. */
type RunnerSettings = Required<Omit<PythonToolOptions, "slots">>;

/**
 * Environment variables a Python tool always gets, when the server has them: enough to find the
 * interpreter, its packages and a locale. Everything else (API keys...) only by `permissions.env`.
 */
export const PYTHON_BASE_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "PYTHONPATH",
  "PYTHONHOME",
  "VIRTUAL_ENV",
  "SYSTEMROOT",
];

/** The environment of a Python tool's process: the base set plus what `permissions.env` grants. */
export function pythonEnv(spec: ToolSpec): Record<string, string> {
  const grant = spec.permissions.env;
  let env: Record<string, string>;
  if (grant === true) {
    env = Deno.env.toObject();
  } else {
    env = {};
    for (const name of [...PYTHON_BASE_ENV, ...(grant === false ? [] : grant)]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
  }
  env.PYTHONIOENCODING = "utf-8";
  env.PYTHONUNBUFFERED = "1";
  // Serving an agent must not write __pycache__ directories next to its tool modules.
  env.PYTHONDONTWRITEBYTECODE = "1";
  return env;
}

/** The interpreter binary and the directories its runtime lives in (mounted into the sandbox). */
export interface PythonRuntime {
  /** The interpreter binary (`sys.executable`). */
  executable: string;
  /** Directories of its runtime (prefixes and `sys.path`). */
  dirs: string[];
}

const PROBE = "import json, sys; print(json.dumps({'executable': sys.executable, 'dirs': " +
  "[sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + sys.path}))";

/**
 * The interpreter behind a command (`sys.executable`) and, when `dirs` is asked for (to mount
 * them into the sandbox), its runtime's directories; found once per tool: the `python3` on PATH
 * is often a pyenv/asdf shim, a shell script that costs ~100 ms on every start. A path
 * (`/usr/bin/python3`, `./venv/bin/python`) is kept as given (and not run unless `dirs` is
 * asked for); so is a name whose probe fails (the call reports it).
 */
export async function probeInterpreter(
  command: string,
  env: Record<string, string>,
  dirs = false,
): Promise<PythonRuntime> {
  const isPath = command.includes("/") || command.includes("\\");
  if (isPath && !dirs) return { executable: command, dirs: [] };
  try {
    const out = await new Deno.Command(command, {
      args: ["-c", PROBE],
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(10_000),
    }).output();
    const found = JSON.parse(new TextDecoder().decode(out.stdout)) as PythonRuntime;
    if (out.success && isAbsolute(found.executable)) {
      const executable = isPath ? command : found.executable;
      const dirs = found.dirs.filter((d) => typeof d === "string" && isAbsolute(d));
      return { executable, dirs: [realDir(executable), realDir(found.executable), ...dirs] };
    }
  } catch { /* not found or not Python: the call reports it */ }
  return { executable: command, dirs: isPath ? [realDir(command)] : [] };
}

/** The interpreter binary behind a command name (see `probeInterpreter`). */
export async function realInterpreter(
  command: string,
  env: Record<string, string>,
): Promise<string> {
  return (await probeInterpreter(command, env)).executable;
}

/** How to start one process of a Python tool with `runtime` (sandboxed unless opted out). */
export function pythonHostSpec(
  spec: ToolSpec,
  runtime: PythonRuntime,
  options: RunnerSettings,
): HostSpec {
  const module = resolve(spec.module);
  const dir = realDir(module);
  const sandboxed = spec.sandbox !== "none";
  const limits = {
    memory: spec.limits.memory * 1024 * 1024,
    cpu_seconds: 2 * Math.ceil(spec.timeout / 1000) + 10,
    processes: sandboxed ? spec.limits.processes : null,
    result_bytes: spec.limits.result_bytes,
    emits: spec.limits.emits,
    emit_bytes: spec.limits.emit_bytes,
  };
  const python = [
    runtime.executable,
    "-c",
    PYTHON_RUNNER_SOURCE,
    JSON.stringify({ module, function: spec.function, limits, with_state: WITH_STATE_MARKER }),
  ];
  let command = python;
  if (sandboxed) {
    const host = sandboxHost();
    if (typeof host === "string") throw new Error(`the OS sandbox is not available: ${host}`);
    const p = spec.permissions;
    command = sandboxCommand(host, {
      read: p.read === true ? true : [dir, ...runtime.dirs, ...(p.read === false ? [] : p.read)],
      write: p.write === true ? true : p.write === false ? [] : p.write,
      net: p.net === true,
      cwd: dir,
    }, python);
  }
  return {
    command: command[0],
    args: command.slice(1),
    // The server's home is not in the sandbox; a fresh /tmp is.
    env: sandboxed ? { ...pythonEnv(spec), HOME: "/tmp", TMPDIR: "/tmp" } : pythonEnv(spec),
    cwd: dir,
    group: true,
    strict: true,
    load_timeout: spec.timeout,
    limits,
    output_tail: options.stderrTail,
  };
}

/** The outcome of a Python tool call from how its process ended. */
export function pythonOutcome(
  end: HostEnd,
  spec: ToolSpec,
  python: string,
  context: Record<string, unknown> | null,
): ToolOutcome {
  const withStderr = (message: string, output: string) => {
    const tail = output.trimEnd();
    return toolError(tail ? `${message}\n--- stderr (end) ---\n${tail}` : message);
  };
  switch (end.kind) {
    case "result":
      return interpretReturn(end.value, context);
    case "error":
      return withStderr(end.message, end.output);
    case "timeout":
      return withStderr(
        end.loading
          ? `the tool module did not load within ${spec.timeout} ms; the tool's processes were killed`
          : `timed out after ${spec.timeout} ms; the tool's processes were killed`,
        end.output,
      );
    case "cancelled":
      return toolError("cancelled: the run was cancelled and the tool's processes were killed");
    case "busy":
      return toolError(end.message);
    case "limit":
      return withStderr(`${end.message}; the tool's processes were killed`, end.output);
    case "protocol":
      return withStderr(
        `the Python process wrote output that is not the tool protocol: ${
          JSON.stringify(end.line.slice(0, 200))
        }`,
        end.output,
      );
    case "exit":
      return withStderr(
        `the Python process ${
          end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code}`
        } before returning a result`,
        end.output,
      );
    case "spawn_failed":
      if (end.error instanceof Deno.errors.NotFound) {
        return toolError(`the Python interpreter '${python}' was not found`);
      }
      return toolError(`the tool's process could not start: ${errorMessage(end.error)}`);
    case "closed":
      return toolError("the server is stopping; the tool's processes were killed");
  }
}

/** Whether a file exists (the interpreter, before starting a sandbox around it). */
function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Creates the Tool for a Python manifest tool block (`function` is required). */
export function createPythonTool(spec: ToolSpec, options: PythonToolOptions = {}): ManagedTool {
  if (!spec.function) throw new Error(`tool '${spec.name}': a python tool needs a function name`);
  const settings: RunnerSettings = {
    python: options.python ?? "python3",
    stderrTail: options.stderrTail ?? 2000,
  };
  let probed: Promise<PythonRuntime> | undefined;
  let runtime: PythonRuntime | undefined;
  const find = async () =>
    runtime = await (probed ??= probeInterpreter(
      settings.python,
      pythonEnv(spec),
      spec.sandbox !== "none",
    ));
  const pool = new ProcessPool(() => pythonHostSpec(spec, runtime!, settings), options.slots);
  // A probe still running (the server stops right after it started) is waited for, not leaked.
  const close = async () => {
    await probed;
    await pool.close();
  };
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    requires_approval: spec.requires_approval,
    idempotent: spec.idempotent,
    async call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome> {
      if (ctx.signal.aborted) return toolError("cancelled before the tool started");
      try {
        const { executable } = await find();
        if (isAbsolute(executable) && !exists(executable)) {
          return toolError(`the Python interpreter '${executable}' was not found`);
        }
        const end = await pool.call(args, ctx, spec.timeout);
        if (!end) return toolError("the server is stopping; the tool was not started");
        return pythonOutcome(end, spec, executable, ctx.context);
      } catch (err) {
        return toolError(`the tool could not run: ${errorMessage(err)}`);
      }
    },
    async prepare() {
      await find();
      await pool.prepare();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
