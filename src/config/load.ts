/**
 * Manifest loading: file (HCL or JSON) -> normalized object -> `${env.NAME}` interpolation ->
 * `AGENT__SECTION__KEY` overrides -> `ManifestSchema` validation -> path resolution.
 *
 * Every failure a user can cause becomes a `ConfigError` carrying one human line per problem
 * (`file:line:col: ...` for syntax, `dotted.path: ...` for content), so the CLI never shows a stack.
 * This file runs the pipeline; each step is a file of its own: `hcl.ts` / `json.ts` (parsing),
 * `normalize.ts` (blocks), `interpolate.ts`, `overrides.ts`, `zod_issues.ts` (validation
 * messages) and `paths.ts` (path resolution).
 */
import { dirname, resolve } from "node:path";
import { ConfigError } from "./errors.ts";
import { parseHcl } from "./hcl.ts";
import { interpolateTree } from "./interpolate.ts";
import { parseJson } from "./json.ts";
import { MANIFEST_BLOCKS, normalizeBlocks } from "./normalize.ts";
import { applyOverrides } from "./overrides.ts";
import { resolvePaths } from "./paths.ts";
import { type Config, ManifestSchema } from "./schema.ts";
import { isPlainObject } from "./tree.ts";
import { formatIssues } from "./zod_issues.ts";

/** Options of `parseConfig`. */
export interface ParseConfigOptions {
  /** Name shown in syntax errors; its extension (`.hcl`/`.json`) picks the format. */
  filename: string;
  /** Directory relative paths in the manifest resolve against; defaults to the working directory. */
  baseDir?: string;
  /** Environment for `${env.NAME}` and `AGENT__*` overrides; defaults to the process environment. */
  env?: Record<string, string>;
  /** Absolute path recorded as `Config.source`. */
  source?: string;
}

/**
 * Loads a manifest file (`.hcl` or `.json`) into a validated configuration, applying
 * interpolation and `AGENT__*` overrides from `env` (the process environment by default).
 */
export async function loadConfig(
  path: string,
  env: Record<string, string> = Deno.env.toObject(),
): Promise<Config> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ConfigError([`${path}: ${describeReadError(error)}`]);
  }
  const source = resolve(path);
  return await parseConfig(text, { filename: path, baseDir: dirname(source), env, source });
}

/** Turns manifest text into a validated configuration; `loadConfig` without the file system. */
export async function parseConfig(text: string, options: ParseConfigOptions): Promise<Config> {
  const { filename } = options;
  const env = options.env ?? Deno.env.toObject();
  const baseDir = resolve(options.baseDir ?? Deno.cwd());
  // A BOM is invisible in editors but breaks both parsers' first token.
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const format = formatOf(filename);
  const raw = format === "hcl" ? await parseHcl(body, filename) : parseJson(body, filename);
  if (!isPlainObject(raw)) {
    throw new ConfigError([`${filename}: the manifest must be an object of blocks`]);
  }

  const errors: string[] = [];
  const normalized = normalizeBlocks(raw, MANIFEST_BLOCKS, [], errors);
  const origins = new Map<string, string>();
  const interpolated = interpolateTree(normalized, ManifestSchema, [], {
    env,
    hcl: format === "hcl",
    errors,
    origins,
  }) as Record<string, unknown>;
  const fromEnv = applyOverrides(interpolated, env, errors, origins);
  if (errors.length > 0) throw new ConfigError(errors);

  const parsed = ManifestSchema.safeParse(interpolated);
  if (!parsed.success) {
    throw new ConfigError(formatIssues(parsed.error.issues, interpolated, origins));
  }
  const manifest = resolvePaths(parsed.data, baseDir, fromEnv, errors);
  if (errors.length > 0) throw new ConfigError(errors);
  return { manifest, baseDir, ...(options.source ? { source: options.source } : {}) };
}

function describeReadError(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "manifest file not found";
  if (error instanceof Deno.errors.IsADirectory) return "is a directory, not a manifest file";
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable) {
    return "permission denied while reading the manifest";
  }
  if (error instanceof TypeError) return "the manifest is not valid UTF-8 text";
  return `cannot read the manifest: ${error instanceof Error ? error.message : String(error)}`;
}

function formatOf(filename: string): "hcl" | "json" {
  const lower = filename.toLowerCase();
  if (lower.endsWith(".hcl")) return "hcl";
  if (lower.endsWith(".json")) return "json";
  throw new ConfigError([`${filename}: unknown manifest format; use a .hcl or .json file`]);
}
