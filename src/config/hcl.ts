/**
 * HCL manifests: text -> the raw object tree (hcl2json's shape, blocks as lists of bodies), with
 * `${env.NAME:-default}` shielded from HCL and its diagnostics rewritten as `file:line:col` lines.
 */
import { ConfigError } from "./errors.ts";
import { parseHclLiteral } from "./hcl_literal.ts";
import { isPlainObject } from "./tree.ts";

// HCL rejects `${env.X:-default}` (a colon inside an interpolation is a syntax error), so before
// parsing we swap `${` and `:-` of such references for private-use characters of the same length:
// HCL sees a literal string, error columns stay right, and `restoreDefaults` swaps them back.
const OPEN_SENTINEL = "\uE000\uE001";
const DEFAULT_SENTINEL = "\uE002\uE003";
const DEFAULT_IN_SOURCE = /(?<!\$)\$\{(\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*):-/g;

/** Parses HCL text; a syntax error is a `ConfigError` with one `file:line:col` line each. */
export async function parseHcl(text: string, filename: string): Promise<unknown> {
  const shielded = shieldDefaults(text);
  // The literal subset without hcl2json (same tree); hcl2json for the rest and for diagnostics.
  const literal = parseHclLiteral(shielded);
  if (literal !== undefined) return restoreDefaults(literal);
  // Loaded on first use: its WebAssembly (a Go program, ~2 MB gzipped) costs ~0.4 s of CPU.
  const { parse: parseHclText } = await import("@cdktn/hcl2json");
  let raw: unknown;
  try {
    raw = await parseHclText(filename, shielded);
  } catch (error) {
    throw new ConfigError(
      hclDiagnostics(error instanceof Error ? error.message : String(error), filename),
    );
  }
  return restoreDefaults(raw);
}

/** `text` with each `${env.X:-default}` made a literal for HCL (same length, same columns). */
export function shieldDefaults(text: string): string {
  return text.replace(DEFAULT_IN_SOURCE, (_, ref) => OPEN_SENTINEL + ref + DEFAULT_SENTINEL);
}

function restoreDefaults(value: unknown): unknown {
  if (typeof value === "string") {
    return value.replaceAll(OPEN_SENTINEL, "${").replaceAll(DEFAULT_SENTINEL, ":-");
  }
  if (Array.isArray(value)) return value.map(restoreDefaults);
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, restoreDefaults(v)]));
  }
  return value;
}

/**
 * hcl2json reports `parse config: [f.hcl:2,9-3,1: Summary; Detail. f.hcl:5,1-2: ...]`: several
 * diagnostics separated by spaces. We split them on the `file:line,col-...: ` that starts each one
 * and rewrite ranges as the conventional `file:line:col`.
 */
function hclDiagnostics(message: string, filename: string): string[] {
  const body = message.replace(/^parse config: \[/, "").replace(/\]$/, "");
  const file = filename.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const start = new RegExp(`(?:^|\\s)(?=${file}:\\d+,\\d+-(?:\\d+,)?\\d+: )`, "g");
  const range = new RegExp(`${file}:(\\d+),(\\d+)-(?:\\d+,)?\\d+`, "g");
  const parts = body.split(start).map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) return [`${filename}: ${message}`];
  return parts.map((p) => {
    const line = p.replace(range, `${filename}:$1:$2`);
    return line.startsWith(`${filename}:`) ? line : `${filename}: ${line}`;
  });
}
