/** The A2A add-on (placeholder until the A2A routes land). */
import { Hono } from "hono";
import type { AppEnv } from "../../http/app.ts";

/** Routes of the A2A add-on, mounted under its base path. */
export function a2aRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
