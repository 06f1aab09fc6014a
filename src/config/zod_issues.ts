/**
 * Schema validation failures -> one human line each (`dotted.path: message`), with the accepted
 * keys or shapes named and where an interpolated or overridden value came from.
 */
import type { z } from "zod";
import { ManifestSchema } from "./schema.ts";
import { closest } from "./suggest.ts";
import { formatPath } from "./tree.ts";
import { objectKeys, scalarKinds, schemaAt } from "./zod_introspect.ts";

/** One line per zod issue; `origins` maps a dotted path to where its value came from. */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  origins: Map<string, string>,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
    const where = formatPath(path);
    const origin = origins.get(where);
    const suffix = origin ? ` (${origin})` : "";
    if (issue.code === "unrecognized_keys") {
      const node = schemaAt(ManifestSchema, path);
      const allowed = node ? objectKeys(node) : [];
      for (const key of issue.keys) {
        const hint = closest(key, allowed);
        lines.push(
          `${formatPath([...path, key])}: unknown attribute or block` +
            (hint ? ` (did you mean ${hint}?)` : "") +
            (allowed.length ? `; expected one of: ${allowed.join(", ")}` : ""),
        );
      }
      continue;
    }
    if (issue.code === "invalid_type" && valueAt(input, path) === undefined) {
      const what = issue.expected === "object" ? "block" : "attribute";
      lines.push(`${where}: missing required ${what} (expected ${issue.expected})`);
      continue;
    }
    let message = issue.message.replace(/^Invalid input: /, "");
    if (issue.code === "invalid_union") {
      // zod says only "Invalid input" here; name the accepted shapes instead.
      const node = schemaAt(ManifestSchema, path);
      const value = valueAt(input, path);
      const received = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
      if (node) message = `expected ${[...scalarKinds(node)].join(" or ")}, received ${received}`;
    }
    message = message.charAt(0).toLowerCase() + message.slice(1);
    lines.push(`${where || "manifest"}: ${message}${suffix}`);
  }
  return lines;
}

function valueAt(value: unknown, path: (string | number)[]): unknown {
  let here = value;
  for (const key of path) {
    if (here === null || typeof here !== "object") return undefined;
    here = (here as Record<string | number, unknown>)[key];
  }
  return here;
}
