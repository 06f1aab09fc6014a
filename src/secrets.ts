/**
 * The configuration's secret values and the scrubber that keeps them in: API keys, tokens and
 * passwords must reach no client, record, log or metric, even when a provider's error body or a
 * tool's error repeats them. A leaf module (no imports), so the logger, the model client and the
 * tool wrapper share one definition of what a secret is.
 */

/** Placeholder written instead of a secret. */
export const REDACTED = "[redacted]";

/** Options of `secretValues`. */
export interface SecretValueOptions {
  /**
   * Environment variables that hold a credential whatever their length or name (the API key
   * variables the model providers read, such as `OPENAI_API_KEY`).
   */
  credentialEnv?: readonly string[];
}

/**
 * The secret values of a configuration and environment: every string the manifest holds under a
 * secret-looking name (`api_key`, `api_keys`, `key`, `token`, `password`, `secret`: model keys, the
 * pub/sub token, API keys of `http_server.auth`), every value of a `headers` or `env` map
 * (`mcp_server` blocks), passwords inside any URL it holds (storage, pub/sub), every environment
 * variable whose name says it holds a key, token, secret or password (12+ chars), the
 * `credentialEnv` variables, and passwords inside URLs of the environment.
 */
export function secretValues(
  config: { manifest: unknown },
  env: Record<string, string> = {},
  options: SecretValueOptions = {},
): string[] {
  const out: string[] = [];
  const urlPassword = (value: string) => {
    if (!value.includes("://")) return;
    try {
      const password = new URL(value).password;
      if (password) out.push(password, decodeURIComponent(password));
    } catch { /* not a URL */ }
  };
  const walk = (value: unknown, secret: boolean, depth: number) => {
    if (depth > 12) return;
    if (typeof value === "string") {
      if (secret) out.push(value);
      urlPassword(value);
    } else if (Array.isArray(value)) {
      for (const v of value) walk(v, secret, depth + 1);
    } else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        // A key's bound tenant is an identifier, not a secret: redacting it would blank ids.
        // Every value of a header or environment map (`mcp_server`) may be a credential.
        const map = SECRET_CONFIG_MAP.test(k) && v !== null && typeof v === "object" &&
          !Array.isArray(v);
        walk(v, (secret && k !== "tenant") || SECRET_CONFIG_KEY.test(k) || map, depth + 1);
      }
    }
  };
  walk(config.manifest, false, 0);
  const credentials = new Set(options.credentialEnv ?? []);
  for (const [name, value] of Object.entries(env)) {
    // Long values only: a short one ("true", "default") would blank out ordinary words.
    if (credentials.has(name) || (SECRET_ENV_NAME.test(name) && value.length >= 12)) {
      out.push(value);
    }
    urlPassword(value);
  }
  return out.filter((s) => s.length > 0);
}

// Manifest attributes holding secrets (at any depth: `agent.model.api_key`, `auth.api_keys`...).
const SECRET_CONFIG_KEY = /^(api_key|api_keys|key|token|password|secret)$/;
// Manifest maps whose values are all secrets (`mcp_server` `headers` and `env`).
const SECRET_CONFIG_MAP = /^(headers|env)$/;
// Environment variables holding secrets by their name.
const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$/i;

/**
 * Secrets worth replacing, longest first (so a secret containing another is replaced whole).
 * Values under 6 characters are left out: they would blank out ordinary words.
 */
export function usableSecrets(secrets: readonly (string | undefined)[] | undefined): string[] {
  return [
    ...new Set((secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 6)),
  ].sort((a, b) => b.length - a.length);
}

/** Replaces every secret of `secrets` (already usable) in `text`. */
export function replaceSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  return out;
}

/** Replaces secret values in the strings of a value, deeply; everything else is kept as is. */
export type Scrub = <T>(value: T) => T;

/**
 * A scrubber for `secrets`: a copy of a value (strings, arrays, plain objects, keys included) with
 * every secret value replaced by `[redacted]`. For what a provider or a tool hands back; unlike
 * the logger's redaction it keeps fields named like secrets, since a tool's result is data.
 */
export function secretScrubber(secrets: readonly (string | undefined)[]): Scrub {
  const usable = usableSecrets(secrets);
  if (usable.length === 0) return (value) => value;
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return replaceSecrets(value, usable);
    if (value === null || typeof value !== "object") return value;
    // Deeper than any sensible result: let the native serializer walk it instead of the stack.
    if (depth > 256) return JSON.parse(replaceSecrets(JSON.stringify(value), usable));
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    if (Object.getPrototypeOf(value) !== Object.prototype) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[replaceSecrets(k, usable)] = walk(v, depth + 1);
    return out;
  };
  return <T>(value: T) => walk(value, 0) as T;
}
