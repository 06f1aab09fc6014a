/** Secret masking: a copy of the configuration (or any value of it) that is safe to print. */
import { isPlainObject } from "./tree.ts";

/**
 * A deep copy safe to print: `api_key`, `api_keys`, `key`, `token` and `password` values (each
 * element of a list of them too), every value of a `headers` or `env` map (`mcp_server` blocks)
 * and passwords inside URLs (`scheme://user:secret@host`) become `****`.
 */
export function maskSecrets<T>(value: T): T {
  return maskValue(value, undefined) as T;
}

const SECRET_KEYS = new Set(["api_key", "api_keys", "key", "token", "password"]);
// Maps whose every value may be a credential (`mcp_server` headers and process environment).
const SECRET_MAPS = new Set(["headers", "env"]);
const URL_PASSWORD = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@:]*:)([^/?#@]*)@/;

/** The URL with its password (`scheme://user:secret@host`) masked; other text unchanged. */
export function maskUrl(text: string): string {
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
