/**
 * Server-side tools: the Tool for every manifest `tool` block. JavaScript/TypeScript tools run in
 * a sandboxed Worker per call, Python tools in a subprocess per call; both report through one
 * outcome rule (`interpretReturn`) and never throw from `call()`. Authoring guide: docs/tools.md.
 */
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Config, ToolConfig } from "../config/schema.ts";
import { createJavaScriptTool } from "./javascript_tool.ts";
import { createPythonTool, type PythonToolOptions } from "./python_tool.ts";
import type { ToolSpec } from "./spec.ts";
import type { Tool } from "./types.ts";

export type { StateUpdate, Tool, ToolCallContext, ToolOutcome } from "./types.ts";
export type { ToolSpec } from "./spec.ts";
export type { JsToolContext, JsToolFunction, WithState } from "./library.ts";
export { WITH_STATE_KEY, WITH_STATE_TAG, withState } from "./library.ts";
export { checkStateUpdate, interpretReturn, toolError } from "./outcome.ts";
export { createJavaScriptTool, workerSandbox } from "./javascript_tool.ts";
export type { WorkerPermissions, WorkerSandbox } from "./javascript_tool.ts";
export { createPythonTool, PYTHON_BASE_ENV, pythonEnv, realInterpreter } from "./python_tool.ts";
export type { PythonToolOptions } from "./python_tool.ts";
export { scrubTools } from "./scrub.ts";

/** Options of `buildTools`. */
export interface BuildToolsOptions {
  /** Settings of the Python runner (the interpreter to use...). */
  python?: PythonToolOptions;
}

/** A manifest's tool blocks cannot be used as written; the message names every tool and file. */
export class ToolConfigError extends Error {
  /** One line per problem, each starting with `tool '<name>'`. */
  readonly problems: string[];

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

/**
 * Resolves and checks one manifest tool block: the module file exists, the function name is
 * usable, and the permissions mean what they say (Python has no sandbox, so only `env` applies).
 */
export function resolveToolSpec(
  name: string,
  tool: ToolConfig,
  baseDir: string,
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
    if (!stat) {
      problems.push(`tool '${name}': module file not found: ${module} (module = "${tool.module}")`);
    } else if (!stat.isFile) {
      problems.push(`tool '${name}': module is not a file: ${module} (module = "${tool.module}")`);
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
    for (const kind of ["net", "read", "write"] as const) {
      if (p[kind] !== false) {
        problems.push(
          `tool '${name}': permissions.${kind} cannot be enforced for a python tool (it runs as ` +
            "an ordinary process with the server's OS access); remove it — only permissions.env " +
            "applies to python tools",
        );
      }
    }
  } else if (tool.function !== undefined && !JS_IDENTIFIER.test(tool.function)) {
    problems.push(`tool '${name}': function "${tool.function}" is not a JavaScript identifier`);
  }
  return { spec: { ...tool, name, module, permissions }, problems };
}

/**
 * Builds one Tool per manifest `tool` block. Checks every block first and throws one
 * `ToolConfigError` naming each broken tool (a missing module file, a python tool without a
 * function...), so a bad manifest fails at startup rather than at the first call.
 */
export function buildTools(config: Config, options: BuildToolsOptions = {}): Map<string, Tool> {
  const specs: ToolSpec[] = [];
  const problems: string[] = [];
  for (const [name, tool] of Object.entries(config.manifest.tool)) {
    const resolved = resolveToolSpec(name, tool, config.baseDir);
    specs.push(resolved.spec);
    problems.push(...resolved.problems);
  }
  if (problems.length > 0) throw new ToolConfigError(problems);
  return new Map(
    specs.map((spec) => [
      spec.name,
      spec.kind === "python" ? createPythonTool(spec, options.python) : createJavaScriptTool(spec),
    ]),
  );
}
