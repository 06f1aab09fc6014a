/**
 * `AGENT__SECTION__KEY` environment overrides: the table of accepted variables and their
 * application over the interpolated tree (an unknown `AGENT__*` variable is an error).
 */
import { closest } from "./suggest.ts";
import { isPlainObject } from "./tree.ts";

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
  { variable: "AGENT__LOG__FORMAT", path: ["runtime", "log_format"], type: "string" },
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

/** Applies `AGENT__*` variables in place; returns the paths they set (dotted). */
export function applyOverrides(
  manifest: Record<string, unknown>,
  env: Record<string, string>,
  errors: string[],
  origins: Map<string, string>,
): Set<string> {
  const applied = new Set<string>();
  const known = new Map(ENV_OVERRIDES.map((o) => [o.variable, o]));
  // In code point order: `localeCompare` loads a collator, ~10 ms of every start.
  const ours = Object.entries(env).filter(([variable]) => variable.startsWith("AGENT__"));
  for (const [variable, text] of ours.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
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
