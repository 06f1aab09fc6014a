/**
 * API keys (optional, docs/auth.md): when `http_server.auth` is configured, every request but the
 * public ones must present a configured key as `Authorization: Bearer <key>` or `X-API-Key: <key>`.
 * A key bound to a tenant decides the request's tenant. Keys are compared as SHA-256 digests in
 * constant time and never logged; only a key's name is.
 */
import type { MiddlewareHandler } from "hono";
import type { Manifest } from "../../config/schema.ts";
import type { AuthConfig } from "../../config/schema/http_server.ts";
import { errors } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { AppEnv } from "./env.ts";

/** The key a request authenticated with: its name (never the key) and its tenant binding. */
export interface ApiKeyIdentity {
  /** The `api_key "name"` label, or `api_keys[i]` for an unnamed key. */
  name: string;
  /** The tenant the key is bound to; unbound keys leave the tenant to `X-Tenant-ID`. */
  tenant?: string;
}

/** Whether API keys are on for this manifest. */
export function authEnabled(manifest: Manifest): boolean {
  return manifest.http_server?.auth !== undefined;
}

/**
 * The playground's static assets, served without a key: a browser loads them without custom
 * headers, they hold no data, and every API call the page makes needs a key. One path segment
 * with a file extension, so no API route (such as A2A's `/{tenant}/...` at the root) can match.
 */
const PUBLIC_ASSET = /^\/playground\/[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.(js|css|svg|png|ico)$/;

/**
 * Paths served without a key: health (load balancers carry no key), the landing page (the
 * playground), the add-ons' discovery documents (`addOnPaths`: A2A discovery happens before a
 * client has credentials) and, unless `public_docs = false`, the API reference. Only for GET and
 * HEAD.
 */
export function publicPaths(manifest: Manifest, addOnPaths: readonly string[] = []): Set<string> {
  const paths = new Set(["/healthz", "/readyz", "/", ...addOnPaths]);
  if (manifest.http_server?.auth?.public_docs ?? true) {
    paths.add("/docs");
    paths.add("/v1/openapi.json");
  }
  return paths;
}

/** Whether a request needs no key. */
export function isPublic(paths: Set<string>, method: string, path: string): boolean {
  // A CORS preflight never carries credentials; answering it reveals nothing.
  if (method === "OPTIONS") return true;
  if (method !== "GET" && method !== "HEAD") return false;
  if (PUBLIC_ASSET.test(path)) return true;
  return paths.has(path) || (path.length > 1 && paths.has(path.replace(/\/+$/, "")));
}

/**
 * The key a request presents: `X-API-Key` when given (it wins, so a client whose `Authorization`
 * header belongs to someone else can still authenticate), else a `Bearer` credential.
 */
export function presentedKey(headers: Headers): string | undefined {
  const apiKey = headers.get("x-api-key")?.trim();
  if (apiKey) return apiKey;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

/** SHA-256 of a string's UTF-8 bytes. */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** Byte equality whose time depends only on the length (digests: always 32 bytes). */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

interface KeyEntry extends ApiKeyIdentity {
  digest: Uint8Array;
}

/** Every configured key as a digest with its identity. */
async function keyEntries(auth: AuthConfig): Promise<KeyEntry[]> {
  const named: [ApiKeyIdentity, string][] = [
    ...auth.api_keys.map((key, i): [ApiKeyIdentity, string] => [{ name: `api_keys[${i}]` }, key]),
    ...Object.entries(auth.api_key).map(([name, k]): [ApiKeyIdentity, string] => [
      k.tenant === undefined ? { name } : { name, tenant: k.tenant },
      k.key,
    ]),
  ];
  return await Promise.all(
    named.map(async ([identity, key]) => ({ ...identity, digest: await sha256(key) })),
  );
}

/**
 * Finds the configured key equal to `presented`. Every entry is compared (no early exit), and the
 * comparison is of digests, so the time taken says nothing about how close a guess was.
 */
export async function matchKey(
  entries: readonly KeyEntry[],
  presented: string,
): Promise<ApiKeyIdentity | undefined> {
  const digest = await sha256(presented);
  let found: KeyEntry | undefined;
  for (const entry of entries) {
    if (timingSafeEqual(entry.digest, digest) && !found) found = entry;
  }
  return found &&
    (found.tenant === undefined
      ? { name: found.name }
      : { name: found.name, tenant: found.tenant });
}

/**
 * Throws 403001 when the request's key is bound to a tenant other than `tenant`. For tenants named
 * elsewhere than `X-Tenant-ID` (the A2A path prefix and body `tenant`), which the middleware
 * cannot see.
 */
export function assertTenantAllowed(key: ApiKeyIdentity | undefined, tenant: string): void {
  if (key?.tenant !== undefined && key.tenant !== tenant) throw errors.tenantForbidden();
}

/**
 * The API key middleware; mount it before the tenant middleware, which takes the tenant of a bound
 * key from `c.get("apiKey")`. Without an `auth` block it lets everything through.
 */
export function apiKeyAuth(
  manifest: Manifest,
  log: Logger,
  addOnPaths: readonly string[] = [],
): MiddlewareHandler<AppEnv> {
  const auth = manifest.http_server?.auth;
  if (!auth) return async (_c, next) => await next();
  const open = publicPaths(manifest, addOnPaths);
  const entries = keyEntries(auth);
  return async (c, next) => {
    if (isPublic(open, c.req.method, c.req.path)) return await next();
    const presented = presentedKey(c.req.raw.headers);
    const key = presented === undefined ? undefined : await matchKey(await entries, presented);
    if (!key) {
      log.info("api key rejected", {
        request_id: c.get("requestId"),
        reason: presented === undefined ? "missing" : "unknown key",
      });
      c.header("www-authenticate", 'Bearer realm="agentd"');
      throw errors.unauthorized();
    }
    const header = c.req.header("x-tenant-id");
    if (header !== undefined) assertTenantAllowed(key, header);
    c.set("apiKey", key);
    await next();
  };
}

/**
 * The A2A Agent Card fields (v1.0 ProtoJSON) advertising the two ways to present a key, or
 * `undefined` when keys are off: `...authScheme(manifest)` in the card.
 */
export function authScheme(manifest: Manifest):
  | {
    securitySchemes: Record<string, Record<string, Record<string, string>>>;
    securityRequirements: { schemes: Record<string, { list: string[] }> }[];
  }
  | undefined {
  if (!authEnabled(manifest)) return undefined;
  return {
    securitySchemes: {
      bearer: {
        httpAuthSecurityScheme: { scheme: "Bearer", description: "An agentd API key." },
      },
      apiKey: {
        apiKeySecurityScheme: {
          location: "header",
          name: "X-API-Key",
          description: "An agentd API key.",
        },
      },
    },
    // Either scheme satisfies the agent (a list of alternatives).
    securityRequirements: [
      { schemes: { bearer: { list: [] } } },
      { schemes: { apiKey: { list: [] } } },
    ],
  };
}
