/**
 * Whether a tool's module has the function its block names, read from the module's text without
 * running it (running would start the tool's code with the server's rights, outside its sandbox).
 * A module whose names cannot be read that way (`export * from`, `from x import *`, a module too
 * large to read) passes: the first call still says what is missing.
 */
import { closest } from "../config/suggest.ts";

/** Modules larger than this are not read (characters). */
const MAX_TEXT = 2_000_000;

/** The problem with `fn` in a module's `text`, or undefined when it is there (or cannot tell). */
export function missingExport(
  kind: "javascript" | "python",
  text: string,
  fn: string | undefined,
): string | undefined {
  if (text.length > MAX_TEXT) return undefined;
  if (kind === "javascript") {
    if (/^\s*export\s*\*\s*from\b/m.test(text)) return undefined;
    const names = javaScriptExports(text);
    const wanted = fn ?? "default";
    if (names.has(wanted)) return undefined;
    if (fn === undefined) {
      return `the module has no default export (name one of its exports with function = "...": ` +
        `${listed(names)})`;
    }
    return notFound(`has no export named "${fn}"`, fn, names);
  }
  if (fn === undefined) return undefined;
  if (/^from\s+\S+\s+import\s+\*/m.test(text)) return undefined;
  const names = pythonNames(text);
  if (names.has(fn)) return undefined;
  return notFound(`defines no function "${fn}" at its top level`, fn, names);
}

function notFound(what: string, fn: string, names: Set<string>): string {
  const hint = closest(fn, [...names]);
  return `the module ${what}${hint ? ` (did you mean "${hint}"?)` : ""}; it has: ${listed(names)}`;
}

function listed(names: Set<string>): string {
  const shown = [...names].filter((n) => n !== "default").sort();
  return shown.length === 0 ? "none" : shown.join(", ");
}

/** The names a JavaScript or TypeScript module exports (`default` for a default export). */
export function javaScriptExports(text: string): Set<string> {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const names = new Set<string>();
  const declared =
    /^\s*export\s+(?:declare\s+)?(?:async\s+)?(?:function\s*\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm;
  for (const m of code.matchAll(declared)) names.add(m[1]);
  if (/^\s*export\s+default\b/m.test(code)) names.add("default");
  // `export const { a, b: c } = ...`
  for (const m of code.matchAll(/^\s*export\s+(?:const|let|var)\s*\{([^}]*)\}/gm)) {
    for (const part of m[1].split(",")) {
      const name = part.split(":").pop()?.trim().split("=")[0].trim();
      if (name) names.add(name);
    }
  }
  // `export { a, b as c }` and `export { x } from "..."`
  for (const m of code.matchAll(/^\s*export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const part of m[1].split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop()?.trim();
      if (name) names.add(name);
    }
  }
  return names;
}

/** The top-level names a Python module defines (functions, classes, assignments, imports). */
export function pythonNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^class\s+([A-Za-z_]\w*)/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^(?:from\s+\S+\s+)?import\s+(.+)$/gm)) {
    for (const part of m[1].replace(/[()]/g, "").split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop()?.trim().split(".")[0];
      if (name) names.add(name);
    }
  }
  return names;
}
