/**
 * The `http_server` settings the routes read per request (body limit, keep-alive), with the
 * schema's own defaults when an app is built from a manifest without the block (tests, OpenAPI).
 */
import type { Context } from "hono";
import type { Manifest } from "../../config/schema.ts";
import { HttpServerSchema } from "../../config/schema/http_server.ts";
import type { AppEnv } from "./env.ts";

const DEFAULTS = HttpServerSchema.parse({});

/** Largest request body in bytes (`http_server.max_body_bytes`). */
export function maxBodyBytes(manifest: Manifest): number {
  return manifest.http_server?.max_body_bytes ?? DEFAULTS.max_body_bytes;
}

/** The body limit of the request's app. */
export function bodyLimit(c: Context<AppEnv>): number {
  return maxBodyBytes(c.get("services").config.manifest);
}

/** Milliseconds between SSE keep-alive comments (`http_server.keepalive`). */
export function keepaliveMs(c: Context<AppEnv>): number {
  return c.get("services").config.manifest.http_server?.keepalive ?? DEFAULTS.keepalive;
}
