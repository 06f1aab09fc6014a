/**
 * JavaScript/TypeScript tools: every call runs in a sandbox process of its own, `deno run` with
 * exactly the permissions the manifest grants (plus reading the module's directory while it
 * loads), a V8 heap cap, an OS limit on its data segment and CPU time, and no environment but
 * what `permissions.env` grants. The process is outside the server's heap and event loop, so a
 * heap bomb, a busy loop or a crash fails only its own call.
 *
 * One process per call, not one per tool: a call cannot see state a previous call (perhaps of
 * another tenant) left behind, and a timeout or cancellation is a plain kill. The process is
 * started before the call (pool.ts), so a call costs a message round trip, not a start.
 */
import { dirname, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { toolDirProblems } from "./checks.ts";
import { type HostEnd, type HostSpec, WITH_STATE_MARKER } from "./host/protocol.ts";
import { JS_HOST_URL } from "./host/sources.ts";
import { errorMessage, interpretReturn, stripAnsi, toolError } from "./outcome.ts";
import { ProcessPool } from "./pool.ts";
import type { ProcessSlots } from "./slots.ts";
import type { ToolSpec } from "./spec.ts";
import type { ManagedTool, ToolCallContext, ToolOutcome } from "./types.ts";

/**
 * Writable memory Deno reserves for itself before a tool allocates anything (≈550 MiB on Deno
 * 2.9, mostly V8's code range, reserved rather than resident), added to `limits.memory` for the
 * process's data-segment limit.
 */
export const DENO_DATA_RESERVE_MIB = 768;

/** The `deno run` permission flags of a tool's process, and what to revoke once it has loaded. */
export interface DenoSandbox {
  /** `--allow-*` flags: exactly the manifest's grants, plus reading the module's directory. */
  flags: string[];
  /** The module's directory when the manifest does not grant reading it; revoked after loading. */
  revoke_read: string[];
  /** The module's directory (its real path): the process's working directory. */
  dir: string;
}

/** Whether a granted path covers `dir` (is it, or one of its ancestors). */
function covers(granted: string, dir: string): boolean {
  const g = resolve(granted);
  return g === dir || dir.startsWith(g.endsWith(sep) ? g : g + sep);
}

/** A path and, when it is reached through a symlink, its real path too. */
function withRealPath(path: string): string[] {
  try {
    const real = Deno.realPathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [path];
  }
}

function flag(name: string, value: boolean | string[]): string[] {
  if (value === true) return [`--allow-${name}`];
  if (value === false || value.length === 0) return [];
  return [`--allow-${name}=${value.join(",")}`];
}

/**
 * The sandbox of a tool's process. Importing a module needs read access to it and to every local
 * module it imports, so the process may read the module's directory (its real path: a symlink
 * out of it leads nowhere readable, and `resolveToolSpec` refuses a directory holding one); unless
 * the manifest grants that too, the bootstrap revokes it as soon as the module has loaded, so the
 * tool function runs with exactly the manifest's permissions. `run`, `ffi` and `sys` are never
 * granted, and remote modules never load (`--no-remote`).
 */
export function denoSandbox(spec: ToolSpec): DenoSandbox {
  const dir = dirname(withRealPath(resolve(spec.module)).at(-1)!);
  const p = spec.permissions;
  let read: boolean | string[] = true;
  const revoke_read: string[] = [];
  if (p.read !== true) {
    const granted = (p.read === false ? [] : p.read).flatMap(withRealPath);
    read = granted.some((g) => covers(g, dir)) ? granted : [dir, ...granted];
    if (!granted.some((g) => covers(g, dir))) revoke_read.push(dir);
  }
  const write = p.write === true || p.write === false ? p.write : p.write.flatMap(withRealPath);
  return {
    flags: [
      ...flag("read", read),
      ...flag("write", write),
      ...flag("net", p.net),
      ...flag("env", p.env),
    ],
    revoke_read,
    dir,
  };
}

/**
 * The `deno` binary that runs tool processes: this one when agentd runs from source; for a
 * `deno compile`d agentd (whose binary cannot run `deno run`), the `deno` on PATH, or null.
 */
export function denoExecutable(): string | null {
  if (!Deno.build.standalone) return Deno.execPath();
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const path = `${dir}/deno`;
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not here */ }
  }
  return null;
}

/** Problems of a JavaScript tool's process on this host (a `deno` to run it, flag syntax). */
export function javaScriptHostProblems(spec: ToolSpec): string[] {
  const problems: string[] = [];
  if (denoExecutable() === null) {
    problems.push(
      `tool '${spec.name}': a compiled agentd runs JavaScript tools with the deno CLI, and there ` +
        "is no deno on PATH; install deno, or run agentd from source",
    );
  }
  const p = spec.permissions;
  for (const kind of ["read", "write", "net", "env"] as const) {
    const value = p[kind];
    if (Array.isArray(value) && value.some((v) => v.includes(","))) {
      problems.push(
        `tool '${spec.name}': permissions.${kind} has an entry with a comma, which Deno's ` +
          "permission flags cannot express",
      );
    }
  }
  return problems;
}

/** Variables Deno itself needs to find its cache (npm packages, compiled TypeScript). */
const DENO_ENV = ["DENO_DIR", "HOME", "XDG_CACHE_HOME"];

/** The environment of a tool's process: what Deno needs, plus what `permissions.env` grants. */
function processEnv(spec: ToolSpec): Record<string, string> {
  const grant = spec.permissions.env;
  const env: Record<string, string> = grant === true ? Deno.env.toObject() : {};
  for (const name of [...DENO_ENV, ...(Array.isArray(grant) ? grant : [])]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  env.NO_COLOR = "1";
  env.DENO_NO_UPDATE_CHECK = "1";
  return env;
}

/**
 * How to start one process of a tool: `deno run` under `/bin/sh`'s `ulimit` (data segment, CPU
 * seconds as a backstop for a process whose server died mid-call, no core dumps).
 */
export function javaScriptHostSpec(spec: ToolSpec, deno: string): HostSpec {
  const sandbox = denoSandbox(spec);
  const module = withRealPath(resolve(spec.module)).at(-1)!;
  const { memory } = spec.limits;
  const dataKiB = (memory + DENO_DATA_RESERVE_MIB) * 1024;
  const cpuSeconds = 2 * Math.ceil(spec.timeout / 1000) + 10;
  const config = {
    module_url: pathToFileURL(module).href,
    function_name: spec.function ?? "default",
    revoke_read: sandbox.revoke_read,
    limits: {
      result_bytes: spec.limits.result_bytes,
      emits: spec.limits.emits,
      emit_bytes: spec.limits.emit_bytes,
    },
    with_state: WITH_STATE_MARKER,
  };
  return {
    command: "/bin/sh",
    args: [
      "-c",
      `ulimit -d ${dataKiB}; ulimit -t ${cpuSeconds}; ulimit -c 0; exec "$@"`,
      "agentd-tool",
      deno,
      "run",
      "--no-prompt",
      "--no-config",
      "--no-lock",
      "--no-remote",
      "--quiet",
      `--v8-flags=--max-old-space-size=${memory}`,
      ...sandbox.flags,
      JS_HOST_URL,
      JSON.stringify(config),
    ],
    env: processEnv(spec),
    cwd: sandbox.dir,
    group: false,
    strict: false,
    load_timeout: spec.timeout,
    limits: config.limits,
    output_tail: 2000,
  };
}

/** The error the model sees for a failure the bootstrap reported. */
function reportedError(end: Extract<HostEnd, { kind: "error" }>): ToolOutcome {
  let message = stripAnsi(end.message);
  if (end.permission) {
    // Deno's advice ("run again with --allow-x") does not apply to a sandboxed tool.
    const what = message.replace(/^(NotCapable|TypeError): /, "")
      .replace(/,? run again with the --allow-[a-z]+ flag/, "");
    message = `permission denied: ${what} (the tool's manifest permissions do not grant it)`;
  }
  if (end.stage === "load") message = `the tool module could not be loaded: ${message}`;
  return toolError(message);
}

/** V8's words when a heap limit is reached (the process then aborts). */
const OUT_OF_MEMORY = /out of memory|Allocation failed/i;

/** The outcome of a JavaScript tool call from how its process ended. */
export function javaScriptOutcome(
  end: HostEnd,
  spec: ToolSpec,
  context: Record<string, unknown> | null,
): ToolOutcome {
  const withOutput = (message: string, output: string) => {
    const tail = stripAnsi(output).trimEnd();
    return toolError(tail ? `${message}\n--- output (end) ---\n${tail}` : message);
  };
  switch (end.kind) {
    case "result":
      return interpretReturn(end.value, context);
    case "error":
      return reportedError(end);
    case "timeout":
      return toolError(
        end.loading
          ? `the tool module did not load within ${spec.timeout} ms; the tool was stopped`
          : `timed out after ${spec.timeout} ms; the tool was stopped`,
      );
    case "cancelled":
      return toolError("cancelled: the run was cancelled and the tool stopped");
    case "busy":
      return toolError(end.message);
    case "limit":
      return toolError(`${end.message}; the tool was stopped`);
    case "protocol":
      return toolError(
        `the tool wrote a message that is not part of the protocol: ${JSON.stringify(end.line)}`,
      );
    case "exit":
      if (OUT_OF_MEMORY.test(end.output)) {
        return toolError(
          `the tool ran out of memory (limits.memory = ${spec.limits.memory} MiB) and was stopped`,
        );
      }
      return withOutput(
        `the tool's process ${
          end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code}`
        } before returning a result`,
        end.output,
      );
    case "spawn_failed":
      return toolError(`the tool's process could not start: ${errorMessage(end.error)}`);
    case "closed":
      return toolError("the server is stopping; the tool was stopped");
  }
}

/** Options of `createJavaScriptTool`. */
export interface JavaScriptToolOptions {
  /** The binary that runs the tool's processes; `denoExecutable()` by default. */
  deno?: string;
  /** Files the tool must never reach (the manifest, the store; see `protectedFiles`). */
  protect?: string[];
  /** The server's bound on tool processes running calls at once (none: unbounded). */
  slots?: ProcessSlots;
}

/** Creates the Tool for a JavaScript/TypeScript manifest tool block. */
export function createJavaScriptTool(
  spec: ToolSpec,
  options: JavaScriptToolOptions = {},
): ManagedTool {
  const deno = options.deno ?? denoExecutable() ?? "deno";
  const protect = options.protect ?? [];
  const pool = new ProcessPool(() => {
    // The module's directory is readable while it loads: what it holds now is what counts.
    const problems = toolDirProblems(spec, protect);
    if (problems.length > 0) throw new Error(problems.join("; "));
    return javaScriptHostSpec(spec, deno);
  }, options.slots);
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    requires_approval: spec.requires_approval,
    idempotent: spec.idempotent,
    async call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome> {
      if (ctx.signal.aborted) return toolError("cancelled before the tool started");
      try {
        const end = await pool.call(args, ctx, spec.timeout);
        if (!end) return toolError("the server is stopping; the tool was not started");
        return javaScriptOutcome(end, spec, ctx.context);
      } catch (err) {
        return toolError(`the tool could not run: ${errorMessage(err)}`);
      }
    },
    prepare: () => pool.prepare(),
    close: () => pool.close(),
    [Symbol.asyncDispose]: () => pool.close(),
  };
}
