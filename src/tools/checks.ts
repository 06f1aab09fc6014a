/**
 * Startup checks of tool blocks beyond the schema: what a tool's process could reach that its
 * permissions do not grant (a symlink out of its directory, the manifest or the store beside
 * it), whether the OS sandbox works on this host, and warnings for tools that opt out of it.
 */
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config/schema.ts";
import { probeSandbox, realPath, within } from "./sandbox.ts";
import type { ToolSpec } from "./spec.ts";

/** Most entries a tool's directory may hold (it is searched for symlinks at startup). */
export const MAX_TOOL_DIR_ENTRIES = 10_000;

/**
 * Files a tool must never be able to read whatever its permissions: the manifest (it may hold
 * secrets) and the SQLite store (every tenant's data), by their real paths.
 */
export function protectedFiles(config: Config): string[] {
  const files: string[] = [];
  if (config.source) files.push(resolve(config.source));
  const storage = config.manifest.runtime.storage;
  if (storage.kind !== "postgres" && storage.path && storage.path !== ":memory:") {
    files.push(resolve(config.baseDir, storage.path));
  }
  return files.map((f) => realPath(f) ?? f);
}

/**
 * Problems of a tool's directory, which its process may read while the module loads (JavaScript)
 * or has mounted (sandboxed Python): the manifest or the store inside it, and unless `symlinks`
 * is false (the Python sandbox mounts nothing a symlink could lead to), a symlink leading out of
 * it or too many entries to check. Checked at startup, and before every JavaScript process start
 * (a symlink made later is caught then).
 */
export function toolDirProblems(
  spec: ToolSpec,
  protect: string[],
  symlinks = true,
): string[] {
  const module = realPath(spec.module);
  if (module === null) return []; // reported as a missing module
  const dir = dirname(module);
  const problems: string[] = [];
  const here = (what: string) => `tool '${spec.name}': ${what}`;
  for (const file of protect) {
    if (within(file, dir)) {
      problems.push(here(
        `its directory ${dir} also holds ${file}, which a tool must not read; give the tool a ` +
          "directory of its own",
      ));
    }
  }
  if (!symlinks) return problems;
  let seen = 0;
  const walk = (path: string): boolean => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(path)];
    } catch {
      return true; // unreadable to the server too
    }
    for (const entry of entries) {
      if (++seen > MAX_TOOL_DIR_ENTRIES) {
        problems.push(here(
          `its directory ${dir} holds more than ${MAX_TOOL_DIR_ENTRIES} entries to check for ` +
            "symlinks; give the tool a directory of its own",
        ));
        return false;
      }
      const full = join(path, entry.name);
      if (entry.isSymlink) {
        const target = realPath(full);
        if (target !== null && !within(target, dir)) {
          problems.push(here(
            `${full} is a symlink to ${target}, outside the tool's directory; a tool's ` +
              "directory may not lead out of it (copy the file in, or grant its path in permissions)",
          ));
        }
      } else if (entry.isDirectory && !walk(full)) {
        return false;
      }
    }
    return true;
  };
  walk(dir);
  return problems;
}

/** Python tools that run in the OS sandbox (all but those with `sandbox = "none"`). */
function sandboxedPythonTools(config: Config): string[] {
  return Object.entries(config.manifest.tool)
    .filter(([, t]) => t.kind === "python" && t.sandbox !== "none")
    .map(([name]) => name);
}

/**
 * One problem per Python tool needing the OS sandbox when this host cannot provide it (probed
 * once); none when no tool needs it.
 */
export async function sandboxProblems(config: Config): Promise<string[]> {
  const names = sandboxedPythonTools(config);
  if (names.length === 0) return [];
  const why = await probeSandbox();
  if (why === null) return [];
  return names.map((name) =>
    `tool '${name}': python tools run in an OS sandbox, which this host cannot provide: ${why}. ` +
    `Fix the host, or set sandbox = "none" in the tool block to run it unsandboxed`
  );
}

/** Warnings about tool blocks that run but weaken isolation (`check` prints them). */
export function toolWarnings(config: Config): string[] {
  return Object.entries(config.manifest.tool)
    .filter(([, t]) => t.kind === "python" && t.sandbox === "none")
    .map(([name]) =>
      `tool '${name}': sandbox = "none": it runs without the OS sandbox, as the server's user, ` +
      "and can read whatever that user can (the manifest and the store included)"
    );
}
