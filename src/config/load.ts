/**
 * Manifest loading: file (HCL or JSON) -> normalized object -> `${env.NAME}` interpolation ->
 * `AGENT__SECTION__KEY` overrides -> `ManifestSchema` validation -> path resolution.
 *
 * Every failure a user can cause becomes a `ConfigError` carrying one human line per problem
 * (`file:line:col: ...` for syntax, `dotted.path: ...` for content), so the CLI never shows a stack.
 */
import { parse as parseHclText } from "@cdktn/hcl2json";
import { dirname, isAbsolute, resolve } from "node:path";
import type { z } from "zod";
import { type Config, type Manifest, ManifestSchema } from "./schema.ts";

/** A manifest that cannot be loaded; `messages` holds one human-readable line per problem. */
export class ConfigError extends Error {
  /** One line per problem, without stack or prefix. */
  readonly messages: readonly string[];

  constructor(messages: string[]) {
    super(messages.join("\n"));
    this.name = "ConfigError";
    this.messages = messages;
  }
}

/** One row of the environment override table: variable -> manifest path -> value type. */
export interface EnvOverride {
  /** The environment variable, `AGENT__SECTION__KEY`. */
  variable: string;
  /** Path of the manifest attribute it sets. */
  path: readonly string[];
  /** How the variable's text is parsed before validation (`list`: comma-separated strings). */
  type: "string" | "integer" | "list";
}

/**
 * The environment overrides, the only `AGENT__*` variables accepted (docs/configuration.md shows
 * the same table). Any other `AGENT__*` variable is an error, so a typo is never silently ignored.
 */
export const ENV_OVERRIDES: readonly EnvOverride[] = [
  { variable: "AGENT__MODEL__PROVIDER", path: ["agent", "model", "provider"], type: "string" },
  { variable: "AGENT__MODEL__MODEL", path: ["agent", "model", "model"], type: "string" },
  { variable: "AGENT__MODEL__BASE_URL", path: ["agent", "model", "base_url"], type: "string" },
  { variable: "AGENT__MODEL__API_KEY", path: ["agent", "model", "api_key"], type: "string" },
  { variable: "AGENT__MODEL__TIMEOUT", path: ["agent", "model", "timeout"], type: "integer" },
  {
    variable: "AGENT__RUNTIME__DEFAULT_TENANT_ID",
    path: ["runtime", "default_tenant_id"],
    type: "string",
  },
  { variable: "AGENT__RUNTIME__LOG_LEVEL", path: ["runtime", "log_level"], type: "string" },
  { variable: "AGENT__STORAGE__KIND", path: ["runtime", "storage", "kind"], type: "string" },
  { variable: "AGENT__STORAGE__PATH", path: ["runtime", "storage", "path"], type: "string" },
  { variable: "AGENT__STORAGE__URL", path: ["runtime", "storage", "url"], type: "string" },
  { variable: "AGENT__STORAGE__SCHEMA", path: ["runtime", "storage", "schema"], type: "string" },
  { variable: "AGENT__STORAGE__TIMEOUT", path: ["runtime", "storage", "timeout"], type: "integer" },
  {
    variable: "AGENT__TOOLS__MAX_PROCESSES",
    path: ["runtime", "tools", "max_processes"],
    type: "integer",
  },
  { variable: "AGENT__PUBSUB__KIND", path: ["runtime", "pubsub", "kind"], type: "string" },
  { variable: "AGENT__PUBSUB__CAPACITY", path: ["runtime", "pubsub", "capacity"], type: "integer" },
  { variable: "AGENT__PUBSUB__URL", path: ["runtime", "pubsub", "url"], type: "string" },
  { variable: "AGENT__PUBSUB__TOKEN", path: ["runtime", "pubsub", "token"], type: "string" },
  { variable: "AGENT__PUBSUB__PREFIX", path: ["runtime", "pubsub", "prefix"], type: "string" },
  {
    variable: "AGENT__PUBSUB__RETENTION",
    path: ["runtime", "pubsub", "retention"],
    type: "integer",
  },
  {
    variable: "AGENT__PUBSUB__RETENTION_MAX_EVENTS",
    path: ["runtime", "pubsub", "retention_max_events"],
    type: "integer",
  },
  {
    variable: "AGENT__PUBSUB__RETENTION_MAX_BYTES",
    path: ["runtime", "pubsub", "retention_max_bytes"],
    type: "integer",
  },
  { variable: "AGENT__REPLICA__ID", path: ["runtime", "replica", "id"], type: "string" },
  {
    variable: "AGENT__REPLICA__HEARTBEAT_INTERVAL",
    path: ["runtime", "replica", "heartbeat_interval"],
    type: "integer",
  },
  { variable: "AGENT__REPLICA__LEASE", path: ["runtime", "replica", "lease"], type: "integer" },
  {
    variable: "AGENT__REPLICA__POLL_INTERVAL",
    path: ["runtime", "replica", "poll_interval"],
    type: "integer",
  },
  {
    variable: "AGENT__REPLICA__SHUTDOWN_GRACE",
    path: ["runtime", "replica", "shutdown_grace"],
    type: "integer",
  },
  { variable: "AGENT__HTTP__HOST", path: ["http_server", "host"], type: "string" },
  { variable: "AGENT__HTTP__PORT", path: ["http_server", "port"], type: "integer" },
  { variable: "AGENT__HTTP__KEEPALIVE", path: ["http_server", "keepalive"], type: "integer" },
  {
    variable: "AGENT__HTTP__MAX_BODY_BYTES",
    path: ["http_server", "max_body_bytes"],
    type: "integer",
  },
  {
    variable: "AGENT__HTTP__HEADER_TIMEOUT",
    path: ["http_server", "header_timeout"],
    type: "integer",
  },
  {
    variable: "AGENT__HTTP__REQUEST_TIMEOUT",
    path: ["http_server", "request_timeout"],
    type: "integer",
  },
  { variable: "AGENT__HTTP__IDLE_TIMEOUT", path: ["http_server", "idle_timeout"], type: "integer" },
  {
    variable: "AGENT__HTTP__MAX_CONNECTIONS",
    path: ["http_server", "max_connections"],
    type: "integer",
  },
  { variable: "AGENT__HTTP__PUBLIC_URL", path: ["http_server", "public_url"], type: "string" },
  { variable: "AGENT__AUTH__API_KEYS", path: ["http_server", "auth", "api_keys"], type: "list" },
];

/** The SQLite file used when the manifest names no storage, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = "./.agentd/agentd.db";

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

/**
 * A deep copy safe to print: `api_key`, `api_keys`, `key`, `token` and `password` values (each
 * element of a list of them too), every value of a `headers` or `env` map (`mcp_server` blocks)
 * and passwords inside URLs (`scheme://user:secret@host`) become `****`.
 */
export function maskSecrets<T>(value: T): T {
  return maskValue(value, undefined) as T;
}

// ---------------------------------------------------------------------------------------------
// Reading and parsing

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

// HCL rejects `${env.X:-default}` (a colon inside an interpolation is a syntax error), so before
// parsing we swap `${` and `:-` of such references for private-use characters of the same length:
// HCL sees a literal string, error columns stay right, and `restoreDefaults` swaps them back.
const OPEN_SENTINEL = "\uE000\uE001";
const DEFAULT_SENTINEL = "\uE002\uE003";
const DEFAULT_IN_SOURCE = /(?<!\$)\$\{(\s*env\.[A-Za-z_][A-Za-z0-9_]*\s*):-/g;

async function parseHcl(text: string, filename: string): Promise<unknown> {
  const shielded = text.replace(
    DEFAULT_IN_SOURCE,
    (_, ref) => OPEN_SENTINEL + ref + DEFAULT_SENTINEL,
  );
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

function parseJson(text: string, filename: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const found = locateJsonError(text);
    const offset = found?.offset ?? jsonErrorOffset(error, text);
    const { line, col } = lineCol(text, offset);
    const what = found?.message ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError([`${filename}:${line}:${col}: invalid JSON: ${what}`]);
  }
}

function jsonErrorOffset(error: unknown, text: string): number {
  const m = /position (\d+)/.exec(error instanceof Error ? error.message : "");
  return m ? Number(m[1]) : text.length;
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, col: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/**
 * A minimal JSON grammar walk that finds where `JSON.parse` failed: V8 omits the position for some
 * errors (`Unexpected token '}'`), and users need a line and column.
 */
function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const describe = () =>
    i >= text.length ? "unexpected end of input" : `unexpected ${JSON.stringify(text[i])}`;
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail("invalid \\u escape");
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "")) fail("invalid escape sequence");
      } else if (text.charCodeAt(i) < 0x20) fail("control character in string");
      i++;
    }
    if (i >= text.length) fail("unterminated string");
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`${describe()}, expected a double-quoted property name`);
        string();
        ws();
        if (text[i] !== ":") fail(`${describe()}, expected ':'`);
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return void i++;
        else fail(`${describe()}, expected ',' or '}'`);
      }
    } else if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return void i++;
        else fail(`${describe()}, expected ',' or ']'`);
      }
    } else if (c === '"') string();
    else {
      const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(
        text.slice(i),
      );
      if (!m) fail(`${describe()}, expected a value`);
      else i += m[0].length;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`${describe()} after the end of the document`);
  } catch (found) {
    if (typeof found === "object" && found !== null && "offset" in found) {
      return found as { offset: number; message: string };
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Normalization

/** Which names are blocks: `single` ones appear at most once, `labelled` ones are keyed by label. */
interface BlockSpec {
  single?: Record<string, BlockSpec>;
  labelled?: Record<string, BlockSpec>;
}

const MANIFEST_BLOCKS: BlockSpec = {
  single: {
    agent: { single: { model: { single: { inference_params: {}, retry: {} } } } },
    runtime: { single: { storage: {}, pubsub: {}, replica: {}, attached: {}, tools: {} } },
    http_server: {
      single: {
        protocol: { single: { ag_ui: {}, a2a: { labelled: { extension: {} } } } },
        auth: { labelled: { api_key: {} } },
        cors: {},
      },
    },
  },
  labelled: {
    capability: {},
    tool: { single: { permissions: {}, limits: {} } },
    mcp_server: {},
  },
};

/**
 * hcl2json gives every block as an array of bodies (`agent: [{...}]`, `tool: {add: [{...}]}`)
 * while object attributes (`parameters = {...}`) stay objects; only names known to be blocks are
 * unwrapped, so attribute values are never touched.
 */
function normalizeBlocks(
  body: Record<string, unknown>,
  spec: BlockSpec,
  path: string[],
  errors: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const single = spec.single?.[key];
    const labelled = spec.labelled?.[key];
    if (single) {
      out[key] = normalizeSingle(value, single, [...path, key], errors);
    } else if (labelled) {
      const here = [...path, key];
      if (isBlockList(value)) {
        errors.push(
          `${formatPath(here)}: a ${key} block needs a name: ${key} "name" { ... }`,
        );
      } else if (isPlainObject(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map((
            [label, entry],
          ) => [
            label,
            normalizeSingle(entry, labelled, [...here, label], errors, `${key} "${label}"`),
          ]),
        );
      } else {
        out[key] = value;
      }
    } else {
      out[key] = value;
    }
  }
  return out;
}

function normalizeSingle(
  value: unknown,
  spec: BlockSpec,
  path: string[],
  errors: string[],
  name = formatPath(path),
): unknown {
  let body = value;
  if (isBlockList(value)) {
    if (value.length > 1) {
      errors.push(
        `${formatPath(path)}: block ${name} is given ${value.length} times; give it once`,
      );
    }
    body = value[0];
  }
  return isPlainObject(body) ? normalizeBlocks(body, spec, path, errors) : body;
}

function isBlockList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject);
}

// ---------------------------------------------------------------------------------------------
// Interpolation

interface InterpolationContext {
  env: Record<string, string>;
  /** HCL output escapes literal `%{` as `%%{` and may contain template directives. */
  hcl: boolean;
  errors: string[];
  /** Dotted path -> where its value came from, appended to schema errors. */
  origins: Map<string, string>;
}

const ENV_REFERENCE = /^\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*(?::-([\s\S]*))?$/;

/**
 * Replaces `${env.NAME}` / `${env.NAME:-default}` in every string, walking the schema alongside so
 * that a string that is exactly one reference can become the number or boolean its field expects.
 */
function interpolateTree(
  value: unknown,
  schema: ZodNode | undefined,
  path: (string | number)[],
  ctx: InterpolationContext,
): unknown {
  if (typeof value === "string") return interpolateString(value, schema, path, ctx);
  if (Array.isArray(value)) {
    const element = schema && childSchema(schema, 0);
    return value.map((v, i) => interpolateTree(v, element, [...path, i], ctx));
  }
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k, interpolateTree(v, schema && childSchema(schema, k), [...path, k], ctx)]),
    );
  }
  return value;
}

function interpolateString(
  text: string,
  schema: ZodNode | undefined,
  path: (string | number)[],
  ctx: InterpolationContext,
): unknown {
  if (!text.includes("${") && !(ctx.hcl && text.includes("%{"))) return text;
  let out = "";
  const names: string[] = [];
  let references = 0;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      out += "${";
      i += 3;
    } else if (ctx.hcl && text.startsWith("%%{", i)) {
      out += "%{";
      i += 3;
    } else if (text.startsWith("${", i)) {
      const end = text.indexOf("}", i + 2);
      if (end < 0) {
        ctx.errors.push(`${formatPath(path)}: unterminated \${ (write $\${ for a literal \${)`);
        return text;
      }
      const expression = text.slice(i + 2, end);
      const match = ENV_REFERENCE.exec(expression);
      if (!match) {
        ctx.errors.push(
          `${formatPath(path)}: unsupported expression \${${expression}}; only \${env.NAME} and ` +
            `\${env.NAME:-default} are supported (write $\${ for a literal \${)`,
        );
        return text;
      }
      const [, name, fallback] = match;
      const set = ctx.env[name];
      // Shell semantics: `:-` also replaces an empty value.
      if (set !== undefined && (fallback === undefined || set !== "")) out += set;
      else if (fallback !== undefined) out += fallback;
      else {
        ctx.errors.push(
          `${formatPath(path)}: environment variable ${name} is not set ` +
            `(set it, or give a default: \${env.${name}:-default})`,
        );
      }
      names.push(name);
      references++;
      i = end + 1;
    } else if (ctx.hcl && text.startsWith("%{", i)) {
      ctx.errors.push(
        `${
          formatPath(path)
        }: template directives (%{ ... }) are not supported (write %%{ for a literal %{)`,
      );
      return text;
    } else {
      out += text[i++];
    }
  }
  if (names.length > 0) {
    ctx.origins.set(formatPath(path), `value from ${names.map((n) => `\${env.${n}}`).join(", ")}`);
  }
  const whole = references === 1 && /^\$\{[^}]*\}$/.test(text);
  return whole && schema ? coerceScalar(out, schema) : out;
}

/** A whole-reference string on a number or boolean field becomes that type (text stays otherwise). */
function coerceScalar(text: string, schema: ZodNode): unknown {
  const kinds = scalarKinds(schema);
  if (kinds.has("string")) return text;
  const trimmed = text.trim();
  if (kinds.has("number") && trimmed !== "" && Number.isFinite(Number(trimmed))) {
    return Number(trimmed);
  }
  if (kinds.has("boolean") && (trimmed === "true" || trimmed === "false")) {
    return trimmed === "true";
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Environment overrides

/** Applies `AGENT__*` variables in place; returns the paths they set (dotted). */
function applyOverrides(
  manifest: Record<string, unknown>,
  env: Record<string, string>,
  errors: string[],
  origins: Map<string, string>,
): Set<string> {
  const applied = new Set<string>();
  const known = new Map(ENV_OVERRIDES.map((o) => [o.variable, o]));
  for (const [variable, text] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (!variable.startsWith("AGENT__")) continue;
    const override = known.get(variable);
    if (!override) {
      const hint = closest(variable, [...known.keys()]);
      errors.push(
        `unknown environment variable ${variable}${hint ? ` (did you mean ${hint}?)` : ""}; ` +
          `known: ${[...known.keys()].join(", ")}`,
      );
      continue;
    }
    // An empty value counts as unset, as deployment templates often render absent values as "".
    if (text === "") continue;
    let value: unknown = text;
    if (override.type === "integer") {
      if (!/^\s*[+-]?\d+\s*$/.test(text)) {
        errors.push(`${variable}: expected an integer, got ${JSON.stringify(text)}`);
        continue;
      }
      value = Number(text.trim());
    } else if (override.type === "list") {
      value = text.split(",").map((item) => item.trim()).filter((item) => item !== "");
    }
    const [section] = override.path;
    // http_server switches the native API on; an environment variable must not do that by itself.
    if (section === "http_server" && !isPlainObject(manifest.http_server)) continue;
    let target = manifest;
    for (const key of override.path.slice(0, -1)) {
      if (!isPlainObject(target[key])) target[key] = {};
      target = target[key] as Record<string, unknown>;
    }
    target[override.path[override.path.length - 1]] = value;
    const dotted = override.path.join(".");
    applied.add(dotted);
    origins.set(dotted, `value from ${variable}`);
  }
  return applied;
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= 3 ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

// ---------------------------------------------------------------------------------------------
// Validation errors

function formatIssues(
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

function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${key}` : key;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schema introspection (zod v4 definitions), for coercion and error hints

/** The part of a zod v4 definition we read. */
interface ZodDef {
  type: string;
  innerType?: ZodNode;
  in?: ZodNode;
  shape?: Record<string, ZodNode>;
  valueType?: ZodNode;
  element?: ZodNode;
  options?: ZodNode[];
}

/** Any zod schema, seen through its definition. */
type ZodNode = { _zod: { def: unknown } };

const WRAPPERS = new Set([
  "optional",
  "nullable",
  "default",
  "prefault",
  "nonoptional",
  "readonly",
  "catch",
]);

function defOf(schema: ZodNode): ZodDef {
  let def = schema._zod.def as ZodDef;
  while (WRAPPERS.has(def.type) && def.innerType) def = def.innerType._zod.def as ZodDef;
  if (def.type === "pipe" && def.in) return defOf(def.in);
  return def;
}

function childSchema(schema: ZodNode, key: string | number): ZodNode | undefined {
  const def = defOf(schema);
  if (def.type === "object" && typeof key === "string") return def.shape?.[key];
  if (def.type === "record" && typeof key === "string") return def.valueType;
  if (def.type === "array") return def.element;
  if (def.type === "union") {
    for (const option of def.options ?? []) {
      const found = childSchema(option, key);
      if (found) return found;
    }
  }
  return undefined;
}

function schemaAt(schema: ZodNode, path: (string | number)[]): ZodNode | undefined {
  let here: ZodNode | undefined = schema;
  for (const key of path) here = here && childSchema(here, key);
  return here;
}

function objectKeys(schema: ZodNode): string[] {
  const def = defOf(schema);
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}

function scalarKinds(schema: ZodNode): Set<string> {
  const def = defOf(schema);
  if (def.type === "union") {
    return new Set((def.options ?? []).flatMap((o) => [...scalarKinds(o)]));
  }
  if (def.type === "number" || def.type === "int") return new Set(["number"]);
  if (def.type === "boolean") return new Set(["boolean"]);
  if (def.type === "string" || def.type === "enum" || def.type === "literal") {
    return new Set(["string"]);
  }
  return new Set([def.type]);
}

// ---------------------------------------------------------------------------------------------
// Path resolution

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
// At least two characters before the colon, so a Windows drive (`C:`) is not taken for a scheme.
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/** Settles the storage kind and makes file paths absolute (see docs/configuration.md). */
function resolvePaths(
  manifest: Manifest,
  baseDir: string,
  fromEnv: Set<string>,
  errors: string[],
): Manifest {
  const storage = { ...manifest.runtime.storage };
  const url = storage.url?.trim() || undefined;
  if (url) {
    if (!POSTGRES_URL.test(url)) {
      errors.push(
        `runtime.storage.url: expected a postgres:// or postgresql:// URL, got ${
          JSON.stringify(maskUrl(url))
        } (SQLite takes a path instead)`,
      );
    } else if (storage.kind === "sqlite") {
      errors.push(
        `runtime.storage.kind: "sqlite" conflicts with the PostgreSQL url; remove one of them`,
      );
    }
    storage.kind = "postgres";
    storage.url = url;
    // The URL wins (it typically comes from AGENT__STORAGE__URL over a development manifest).
    delete storage.path;
  } else {
    if (storage.kind === "postgres") {
      errors.push(
        `runtime.storage.url: required when kind = "postgres" (a postgres:// URL, or AGENT__STORAGE__URL)`,
      );
    }
    delete storage.url;
    storage.kind = "sqlite";
    const path = storage.path?.trim() || undefined;
    if (path === undefined) storage.path = resolve(Deno.cwd(), DEFAULT_SQLITE_PATH);
    else if (path === ":memory:") storage.path = path;
    // A path from AGENT__STORAGE__PATH was typed relative to the shell, not to the manifest.
    else storage.path = resolve(fromEnv.has("runtime.storage.path") ? Deno.cwd() : baseDir, path);
  }

  const tool = Object.fromEntries(
    Object.entries(manifest.tool).map(([name, t]) => [
      name,
      {
        ...t,
        module: isAbsolute(t.module) || URL_SCHEME.test(t.module)
          ? t.module
          : resolve(baseDir, t.module),
      },
    ]),
  );
  const mcp_server = Object.fromEntries(
    Object.entries(manifest.mcp_server).map(([name, server]) => {
      if (server.command === undefined) return [name, server];
      // A program named by a relative path was written next to the manifest; a bare name is
      // looked up on PATH.
      const [program, ...args] = server.command;
      const relative = program.startsWith("./") || program.startsWith("../");
      return [name, {
        ...server,
        command: [relative ? resolve(baseDir, program) : program, ...args],
        cwd: resolve(baseDir, server.cwd ?? "."),
      }];
    }),
  );
  return { ...manifest, tool, mcp_server, runtime: { ...manifest.runtime, storage } };
}

// ---------------------------------------------------------------------------------------------
// Secrets

const SECRET_KEYS = new Set(["api_key", "api_keys", "key", "token", "password"]);
// Maps whose every value may be a credential (`mcp_server` headers and process environment).
const SECRET_MAPS = new Set(["headers", "env"]);
const URL_PASSWORD = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]*)@/;

function maskUrl(text: string): string {
  return text.replace(URL_PASSWORD, (_, head) => `${head}****@`);
}

function maskValue(value: unknown, key: string | undefined): unknown {
  if (typeof value === "string") {
    if (key !== undefined && SECRET_KEYS.has(key) && value !== "") return "****";
    return maskUrl(value);
  }
  // Elements of a list inherit its name, so each of `api_keys = [...]` is masked.
  if (Array.isArray(value)) return value.map((v) => maskValue(v, key));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k, SECRET_MAPS.has(k) && isPlainObject(v) ? maskMap(v) : maskValue(v, k)]),
    );
  }
  return value;
}

function maskMap(map: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(map).map(([k, v]) => [k, typeof v === "string" && v !== "" ? "****" : v]),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
