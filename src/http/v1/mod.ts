/** The native `/v1` API: sessions, messages, checkpoints and runs. */
import { Hono } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { sessionRoutes } from "./sessions.ts";
import { messageRoutes } from "./messages.ts";
import { checkpointRoutes } from "./checkpoints.ts";
import { runRoutes } from "./runs.ts";

/** All `/v1` routes, mounted by the app under `/v1`. */
export function v1Routes(): Hono<AppEnv> {
  const v1 = new Hono<AppEnv>();
  v1.route("/", sessionRoutes());
  v1.route("/", messageRoutes());
  v1.route("/", checkpointRoutes());
  v1.route("/", runRoutes());
  return v1;
}
