/**
 * Server-side tools: the Tool for every manifest `tool` block. JavaScript/TypeScript tools run in
 * a Deno sandbox process per call, Python tools in an OS-sandboxed process per call (both started
 * ahead of the call); both report through one outcome rule (`interpretReturn`) and never throw
 * from `call()`. Authoring guide and isolation table: docs/tools.md.
 */
import { missingExport } from "./exports.ts";
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../config/schema.ts";
import type { ToolConfig } from "../config/schema/tool.ts";
import { createJavaScriptTool, javaScriptHostProblems } from "./javascript_tool.ts";
import { createPythonTool, type PythonToolOptions } from "./python_tool.ts";
import type { ToolSpec } from "./spec.ts";
import type { Tool } from "./types.ts";
import { protectedFiles, toolDirProblems } from "./checks.ts";
import { ProcessSlots } from "./slots.ts";

export type { ManagedTool, StateUpdate, Tool, ToolCallContext, ToolOutcome } from "./types.ts";
export type { ToolSpec } from "./spec.ts";
export type { JsToolContext, JsToolFunction, WithState } from "./library.ts";
export { WITH_STATE_KEY, WITH_STATE_TAG, withState } from "./library.ts";
export { checkStateUpdate, interpretReturn, toolError } from "./outcome.ts";
export { createJavaScriptTool, denoExecutable, denoSandbox } from "./javascript_tool.ts";
export type { DenoSandbox, JavaScriptToolOptions } from "./javascript_tool.ts";
export {
  createPythonTool,
  probeInterpreter,
  PYTHON_BASE_ENV,
  pythonEnv,
  realInterpreter,
} from "./python_tool.ts";
export type { PythonRuntime, PythonToolOptions } from "./python_tool.ts";
export { scrubTools } from "./scrub.ts";
export { ProcessSlots, type Release } from "./slots.ts";
export { wrapTool } from "./wrap.ts";
export { protectedFiles, sandboxProblems, toolWarnings } from "./checks.ts";

/** Stops what the tools started (their sandbox processes); for a server's shutdown. */
export async function closeTools(tools: Map<string, Tool>): Promise<void> {
  await Promise.all([...tools.values()].map((t) => t.close?.()));
}

/** Options of `buildTools`. */
export interface BuildToolsOptions {
  /** Settings of the Python runner (the interpreter to use...); its `slots` are the server's. */
  python?: PythonToolOptions;
}

/** A manifest's tool blocks cannot be used as written; the message names every tool and file. */
export class ToolConfigError extends Error {
  /** One line per problem, each starting with `tool '<name>'`. */
  readonly problems: string[];

  /** An error listing `problems`, one line each. */
  constructor(problems: string[]) {
    super(`invalid tool configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ToolConfigError";
    this.problems = problems;
  }
}

const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;
const JS_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const PY_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A module reference of the manifest as an absolute file path, or a problem. */
function modulePath(module: string, baseDir: string): { path: string } | { problem: string } {
  if (URL_SCHEME.test(module)) {
    if (!module.startsWith("file:")) {
      return {
        problem: `module "${module}" is remote; tools load local files only (vendor the code)`,
      };
    }
    return { path: fileURLToPath(module) };
  }
  return { path: isAbsolute(module) ? module : resolve(baseDir, module) };
}

/** A module path as the manifest wrote it: relative to its folder (`./tools/add.ts`) when inside. */
function asWritten(module: string, baseDir: string): string {
  const rel = relative(baseDir, module);
  return rel.startsWith("..") || isAbsolute(rel) ? module : `./${rel}`;
}

/**
 * Resolves and checks one manifest tool block: the module file exists, the function name is
 * usable, the permissions mean what they say (a python tool without the OS sandbox can only be
 * given `env`), and the tool's directory leads nowhere else and holds none of `protect` (the
 * manifest, the store: see checks.ts).
 */
export function resolveToolSpec(
  name: string,
  tool: ToolConfig,
  baseDir: string,
  protect: string[] = [],
): { spec: ToolSpec; problems: string[] } {
  const problems: string[] = [];
  const where = modulePath(tool.module, baseDir);
  let module = tool.module;
  if ("problem" in where) {
    problems.push(`tool '${name}': ${where.problem}`);
  } else {
    module = where.path;
    let stat: Deno.FileInfo | null = null;
    try {
      stat = Deno.statSync(module);
    } catch { /* reported below */ }
    // Said as the manifest has it: loading made the path absolute.
    const shown = asWritten(module, baseDir);
    if (!stat) {
      problems.push(`tool '${name}': module file not found: ${shown} (next to the manifest)`);
    } else if (!stat.isFile) {
      problems.push(`tool '${name}': module is not a file: ${shown}`);
    }
  }

  const p = tool.permissions;
  const paths = (v: boolean | string[]) =>
    Array.isArray(v) ? v.map((x) => isAbsolute(x) ? x : resolve(baseDir, x)) : v;
  const permissions = { ...p, read: paths(p.read), write: paths(p.write) };

  if (tool.kind === "python") {
    if (!tool.function) {
      problems.push(`tool '${name}': a python tool needs function = "<name of the function>"`);
    } else if (!PY_IDENTIFIER.test(tool.function)) {
      problems.push(`tool '${name}': function "${tool.function}" is not a Python identifier`);
    }
    if (tool.sandbox === "none") {
      for (const kind of ["net", "read", "write"] as const) {
        if (p[kind] !== false) {
          problems.push(
            `tool '${name}': permissions.${kind} cannot be enforced for a python tool with ` +
              'sandbox = "none" (it runs as an ordinary process with the server\'s OS access); ' +
              "remove it, or the sandbox opt-out — only permissions.env applies without the sandbox",
          );
        }
      }
    } else if (Array.isArray(p.net)) {
      problems.push(
        `tool '${name}': permissions.net of a python tool is true or false (its sandbox has the ` +
          "host's network or none; it cannot filter hosts)",
      );
    }
  } else {
    if (tool.function !== undefined && !JS_IDENTIFIER.test(tool.function)) {
      problems.push(`tool '${name}': function "${tool.function}" is not a JavaScript identifier`);
    }
    if (tool.sandbox !== undefined) {
      problems.push(
        `tool '${name}': sandbox applies to python tools; a javascript tool always runs in its ` +
          "Deno sandbox",
      );
    }
  }
  const spec = { ...tool, name, module, permissions };
  if (problems.length === 0) {
    // A misspelt function fails `check`, not the model's first call.
    const missing = missingExport(tool.kind, Deno.readTextFileSync(module), tool.function);
    if (missing) {
      const fn = tool.function ?? "default";
      problems.push(`tool '${name}': function "${fn}": ${missing} (${asWritten(module, baseDir)})`);
    }
  }
  if (problems.length === 0) {
    if (tool.kind === "javascript") problems.push(...javaScriptHostProblems(spec));
    if (tool.kind === "javascript" || tool.sandbox !== "none") {
      problems.push(...toolDirProblems(spec, protect, tool.kind === "javascript"));
    }
  }
  return { spec, problems };
}

/**
 * Builds one Tool per manifest `tool` block. Checks every block first and throws one
 * `ToolConfigError` naming each broken tool (a missing module file, a python tool without a
 * function...), so a bad manifest fails at startup rather than at the first call.
 */
export function buildTools(config: Config, options: BuildToolsOptions = {}): Map<string, Tool> {
  const specs: ToolSpec[] = [];
  const problems: string[] = [];
  const protect = protectedFiles(config);
  for (const [name, tool] of Object.entries(config.manifest.tool)) {
    const resolved = resolveToolSpec(name, tool, config.baseDir, protect);
    specs.push(resolved.spec);
    problems.push(...resolved.problems);
  }
  if (problems.length > 0) throw new ToolConfigError(problems);
  // One bound for every tool of the server.
  const slots = new ProcessSlots(config.manifest.runtime.tools.max_processes);
  return new Map(
    specs.map((spec) => [
      spec.name,
      spec.kind === "python"
        ? createPythonTool(spec, { ...options.python, slots })
        : createJavaScriptTool(spec, { protect, slots }),
    ]),
  );
}
