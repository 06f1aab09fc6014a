/**
 * The manifest as a plain value tree, between parsing and validation: whether a node is an object
 * of named children, and the dotted path (`agent.model.api_key`, `tool.add.parameters[0]`) every
 * message uses to say where a problem is.
 */

/** Whether a parsed value is an object of named children (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The dotted form of a path in the manifest, as messages show it: `a.b[0].c`. */
export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${key}` : key;
  }
  return out;
}
