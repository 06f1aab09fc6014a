/** The AG-UI add-on (placeholder until the AG-UI routes land). */
import { Hono } from "hono";
import type { AppEnv } from "../../http/app.ts";

/** Routes of the AG-UI add-on, mounted under its base path. */
export function agUiRoutes(): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
