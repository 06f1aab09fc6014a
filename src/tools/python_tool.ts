/**
 * Python tools: every call runs `python3 -c <runner>` as a subprocess in its own process group
 * and speaks JSON lines with it (see python_runner_source.ts). Python has no sandbox: the process
 * has the server's OS-level access, and only its environment is narrowed.
 *
 * Whatever happens (exception, exit, a crash of the interpreter, output that is not the protocol,
 * a timeout, a cancelled run) the call ends with the process group killed, the process reaped
 * and an outcome for the model; `call()` never rejects.
 */
import { isAbsolute, resolve } from "node:path";
import { errorMessage, interpretReturn, toolError } from "./outcome.ts";
import { PYTHON_RUNNER_SOURCE } from "./python_runner_source.ts";
import type { ToolSpec } from "./spec.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "./types.ts";

/** Settings of the Python runner shared by all Python tools of a server. */
export interface PythonToolOptions {
  /** The interpreter to run (a name on PATH or a path); default `python3`. */
  python?: string;
  /** How many characters of the process's stderr an error message keeps (the end); default 2000. */
  stderrTail?: number;
  /** Longest protocol line accepted, in characters; default 16 MiB. */
  maxLineLength?: number;
}

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

/** Creates the Tool for a Python manifest tool block (`function` is required). */
export function createPythonTool(spec: ToolSpec, options: PythonToolOptions = {}): Tool {
  if (!spec.function) throw new Error(`tool '${spec.name}': a python tool needs a function name`);
  const settings = {
    python: options.python ?? "python3",
    stderrTail: options.stderrTail ?? 2000,
    maxLineLength: options.maxLineLength ?? 16 * 1024 * 1024,
  };
  const module = resolve(spec.module);
  const fn = spec.function;
  const env = pythonEnv(spec);
  let interpreter: Promise<string> | undefined;
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    requires_approval: spec.requires_approval,
    async call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome> {
      try {
        interpreter ??= realInterpreter(settings.python, env);
        const python = await interpreter;
        return await callPython(spec, { ...settings, python }, module, fn, env, args, ctx);
      } catch (err) {
        return toolError(`the tool could not run: ${errorMessage(err)}`);
      }
    },
  };
}

/**
 * The interpreter binary behind a command name (`sys.executable`), found once per tool: the
 * `python3` on PATH is often a pyenv/asdf shim, a shell script that costs ~100 ms on every start.
 * A path (`/usr/bin/python3`, `./venv/bin/python`) is used as given; so is a name whose probe fails.
 */
export async function realInterpreter(
  command: string,
  env: Record<string, string>,
): Promise<string> {
  if (command.includes("/") || command.includes("\\")) return command;
  try {
    const out = await new Deno.Command(command, {
      args: ["-c", "import sys; print(sys.executable)"],
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(10_000),
    }).output();
    const path = new TextDecoder().decode(out.stdout).trim();
    if (out.success && isAbsolute(path)) return path;
  } catch { /* not found or not Python: the call reports it */ }
  return command;
}

/** Keeps the last `limit` characters of a text stream. */
class Tail {
  #text = "";
  #cut = false;
  constructor(readonly limit: number) {}
  push(chunk: string): void {
    this.#text += chunk;
    // Trim lazily so a chatty tool costs amortized O(1) per chunk.
    if (this.#text.length > this.limit * 2) {
      this.#text = this.#text.slice(-this.limit);
      this.#cut = true;
    }
  }
  toString(): string {
    const cut = this.#cut || this.#text.length > this.limit;
    return (cut ? "…" : "") + this.#text.slice(-this.limit);
  }
}

/** A protocol line from the runner. */
type RunnerMessage =
  | { type: "emit"; name: string; value: unknown }
  | { type: "result"; value: unknown }
  | { type: "error"; error: string };

function parseLine(line: string): RunnerMessage | null {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof m !== "object" || m === null) return null;
  const r = m as Record<string, unknown>;
  if (r.type === "emit" && typeof r.name === "string") return r as RunnerMessage;
  if (r.type === "result" && Object.hasOwn(r, "value")) return r as RunnerMessage;
  if (r.type === "error" && typeof r.error === "string") return r as RunnerMessage;
  return null;
}

/** Why a call stopped before the runner reported. */
type Stop = { reason: "timeout" | "cancelled" | "protocol" | "too_long"; detail?: string };

async function callPython(
  spec: ToolSpec,
  settings: Required<PythonToolOptions>,
  module: string,
  fn: string,
  env: Record<string, string>,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<ToolOutcome> {
  if (ctx.signal.aborted) return toolError("cancelled before the tool started");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(settings.python, {
      args: ["-c", PYTHON_RUNNER_SOURCE, module, fn],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env,
      // setsid(): the runner leads its own process group, so one kill reaches the tool's children.
      detached: true,
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      return toolError(`the Python interpreter '${settings.python}' was not found`);
    }
    throw err;
  }
  const pid = child.pid;
  const killGroup = () => {
    try {
      Deno.kill(-pid, "SIGKILL");
    } catch {
      // No process group (already gone, or a platform without them): kill the runner itself.
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
    }
  };

  const stderr = new Tail(settings.stderrTail);
  const errors = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  const stderrDone = (async () => {
    try {
      while (true) {
        const { value, done } = await errors.read();
        if (done) return;
        stderr.push(value);
      }
    } catch { /* cancelled */ }
  })();

  const stdin = child.stdin.getWriter();
  // The runner may already be dead (bad interpreter): its exit status tells the story, not EPIPE.
  stdin.write(
    new TextEncoder().encode(
      JSON.stringify({
        args,
        context: ctx.context,
        tenant_id: ctx.tenant_id,
        session_id: ctx.session_id,
        run_id: ctx.run_id,
        tool_call_id: ctx.tool_call_id,
      }) + "\n",
    ),
  ).catch(() => {});

  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stop: Stop | null = null;
  let final: Exclude<RunnerMessage, { type: "emit" }> | null = null;
  const halt = (s: Stop) => {
    if (stop || final) return;
    stop = s;
    killGroup();
    // Stop reading too: a process that escaped the group could keep stdout open forever.
    lines.cancel().catch(() => {});
  };
  const timer = setTimeout(() => halt({ reason: "timeout" }), spec.timeout);
  const onAbort = () => halt({ reason: "cancelled" });
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  try {
    let buffer = "";
    reading: while (true) {
      const { value, done } = await lines.read();
      if (done) break;
      buffer += value;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (stop) break reading;
        if (line.length > settings.maxLineLength) {
          halt({ reason: "too_long" });
          break reading;
        }
        if (line.trim() === "") continue;
        const m = parseLine(line);
        if (m === null) {
          halt({ reason: "protocol", detail: line });
          break reading;
        }
        if (m.type === "emit") {
          try {
            ctx.emit(m.name, m.value);
          } catch { /* a failing event sink must not fail the tool */ }
          continue;
        }
        final = m;
        break reading;
      }
      if (buffer.length > settings.maxLineLength) {
        halt({ reason: "too_long" });
        break;
      }
    }
    if (!final && !stop && buffer.trim() !== "") halt({ reason: "protocol", detail: buffer });
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
    // The call is over either way: take down anything the tool left running, then reap the runner
    // (it is a zombie until then, so its process group id cannot have been reused).
    killGroup();
    await lines.cancel().catch(() => {});
  }
  const status = await child.status;
  await stdin.close().catch(() => {});
  // A child that left the process group may still hold stderr open: do not wait for it long.
  let grace: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([stderrDone, new Promise((r) => grace = setTimeout(r, 200))]);
  clearTimeout(grace);
  await errors.cancel().catch(() => {});

  if (final?.type === "result") return interpretReturn(final.value, ctx.context);
  const withStderr = (message: string) => {
    const tail = stderr.toString().trimEnd();
    return toolError(tail ? `${message}\n--- stderr (end) ---\n${tail}` : message);
  };
  if (final?.type === "error") return withStderr(final.error);
  const s = stop as Stop | null;
  if (s?.reason === "timeout") {
    return withStderr(`timed out after ${spec.timeout} ms; the tool's processes were killed`);
  }
  if (s?.reason === "cancelled") {
    return toolError("cancelled: the run was cancelled and the tool's processes were killed");
  }
  if (s?.reason === "protocol") {
    const shown = JSON.stringify((s.detail ?? "").slice(0, 200));
    return withStderr(`the Python process wrote output that is not the tool protocol: ${shown}`);
  }
  if (s?.reason === "too_long") {
    return withStderr(
      `the Python process wrote a line longer than ${settings.maxLineLength} characters`,
    );
  }
  const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`;
  return withStderr(`the Python process ${how} before returning a result`);
}
