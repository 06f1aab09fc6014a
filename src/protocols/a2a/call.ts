/**
 * Who asks, as both bindings establish it before any operation runs: the service parameters of
 * the request (`A2A-Version`, `A2A-Extensions`, spec §3.2.6, HTTP headers on both bindings) and
 * the tenant, named by the binding's own places (the REST path prefix or a body/params `tenant`)
 * and the `X-Tenant-ID` header.
 */
import type { Context } from "hono";
import { ClientIdSchema } from "../../api/schemas.ts";
import {
  type AppEnv,
  type AppServices,
  assertTenantAllowed,
  queryParam,
} from "../../http/kit/mod.ts";
import { parseTaskCursor, type TaskCursor } from "./encoder.ts";
import { a2aErrors } from "./errors.ts";
import { A2A_VERSION } from "./schemas.ts";

/** Who asks: the app's services, the resolved tenant, the extensions the request names. */
export interface A2aCall {
  services: AppServices;
  tenant: string;
  /** Extension URIs the request asks to activate (`A2A-Extensions`), before any filtering. */
  extensions: readonly string[];
}

/**
 * `A2A-Version` (header, or the query parameter of that name) must be 1.0 when given. An absent
 * one is served as 1.0: this interface speaks only 1.0 shapes, so reading it as 0.3 (as the spec
 * would) would help no one.
 */
export function checkVersion(c: Context<AppEnv>): void {
  const version = c.req.header("a2a-version") ?? c.req.query("A2A-Version");
  if (version === undefined || version.trim() === "") return;
  const [major, minor = "0"] = version.trim().split(".");
  if (`${Number(major)}.${Number(minor)}` !== A2A_VERSION) {
    throw a2aErrors.version(version.trim(), A2A_VERSION);
  }
}

/** The extension URIs of `A2A-Extensions` (or v0.3's `X-A2A-Extensions`), comma-separated. */
export function requestedExtensions(c: Context<AppEnv>): string[] {
  const header = c.req.header("a2a-extensions") ?? c.req.header("x-a2a-extensions") ?? "";
  return [...new Set(header.split(",").map((uri) => uri.trim()).filter((uri) => uri !== ""))];
}

/**
 * The call of a request: the tenant named in `places` (the binding's own: the REST path prefix,
 * a body or params `tenant`) and the `X-Tenant-ID` header, which must agree when several are
 * given; none gives the app's tenant (the API key's or the manifest default). A tenant-bound API
 * key may not reach another tenant this way (403001).
 */
export function callOf(
  c: Context<AppEnv>,
  places: readonly [where: string, tenant: string | null | undefined][] = [],
): A2aCall {
  const named: [string, string][] = [];
  for (const [where, value] of places) {
    if (value !== undefined && value !== null && value !== "") named.push([where, value]);
  }
  const header = c.req.header("x-tenant-id");
  if (header !== undefined) named.push(["X-Tenant-ID", header]);
  for (const [where, value] of named) {
    const parsed = ClientIdSchema.safeParse(value);
    if (!parsed.success) {
      throw a2aErrors.invalid(`invalid tenant '${value}' in ${where}`, [{
        field: "tenant",
        description: parsed.error.issues[0]?.message ?? "invalid",
      }]);
    }
  }
  if (new Set(named.map(([, v]) => v)).size > 1) {
    throw a2aErrors.invalid(
      `conflicting tenants: ${named.map(([w, v]) => `${w} says '${v}'`).join(", ")}`,
      [{ field: "tenant", description: "the tenant is named differently in several places" }],
    );
  }
  const tenant = named.length > 0 ? named[0][1] : c.get("tenant");
  assertTenantAllowed(c.get("apiKey"), tenant);
  return { services: c.get("services"), tenant, extensions: requestedExtensions(c) };
}

/** The response header naming the extensions a request activated (none: no header). */
export function extensionHeader(activated: readonly string[]): Record<string, string> {
  return activated.length > 0 ? { "a2a-extensions": activated.join(", ") } : {};
}

/**
 * The cursor a subscription resumes from, on both bindings: `Last-Event-ID` (the id of the last
 * frame the client got, `N[.k]` or `<run_id>/N[.k]`), or the `after` query parameter; none
 * without either.
 */
export function taskCursor(c: Context<AppEnv>): TaskCursor | undefined {
  const header = c.req.header("last-event-id")?.trim();
  const query = queryParam(c, "after");
  const [field, value] = header ? ["Last-Event-ID", header] : ["after", query];
  if (value === undefined) return undefined;
  const cursor = parseTaskCursor(value);
  if (cursor) return cursor;
  throw a2aErrors.invalid(`${field} is not a frame id of a task stream`, [{
    field,
    description: "must be N or N.k, or <run_id>/N for a later turn (non-negative integers)",
  }]);
}
