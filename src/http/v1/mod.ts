/** The native `/v1` API: sessions, messages, checkpoints and runs, each route declared once. */
import { type Routes, routes } from "../kit/mod.ts";
import { sessionRoutes } from "./sessions.ts";
import { messageRoutes } from "./messages.ts";
import { checkpointRoutes } from "./checkpoints.ts";
import { runRoutes } from "./runs.ts";
export { agentRoutes } from "./agent.ts";

/** All `/v1` routes, mounted by the app under `/v1`. */
export function v1Routes(): Routes {
  const v1 = routes();
  v1.route("/", sessionRoutes());
  v1.route("/", messageRoutes());
  v1.route("/", checkpointRoutes());
  v1.route("/", runRoutes());
  return v1;
}
