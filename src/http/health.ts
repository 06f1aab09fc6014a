/** Liveness, readiness and the Prometheus scrape: what load balancers and monitoring call. */
import { z } from "zod";
import { errors } from "../errors.ts";
import { metricsHandler } from "../metrics/mod.ts";
import type { AppServices } from "./kit/mod.ts";
import { route, type Routes, routes } from "./kit/mod.ts";

/** Body of `GET /healthz`. */
export const HealthSchema = z.object({
  status: z.literal("ok").describe("Always `ok`: the process serves requests."),
}).meta({ id: "Health", description: "The process is alive." });
/** Body of `GET /readyz`. */
export const ReadySchema = z.object({
  status: z.literal("ready").describe("Always `ready`: the store answered."),
  store: z.enum(["sqlite", "postgres"]).describe("The store that answered."),
}).meta({ id: "Ready", description: "The server can take work." });

/** `/healthz`, `/readyz` and, when the app has metrics, `/metrics`. */
export function healthRoutes(services: AppServices): Routes {
  const r = routes();
  route(r, {
    method: "get",
    path: "/healthz",
    operationId: "health",
    tags: ["Health"],
    summary: "Liveness",
    description: "200 while the process serves.",
    responses: {
      200: {
        description: "The process serves.",
        content: { "application/json": { schema: HealthSchema } },
      },
    },
  }, (c) => c.json({ status: "ok" }));

  route(r, {
    method: "get",
    path: "/readyz",
    operationId: "ready",
    tags: ["Health"],
    summary: "Readiness",
    description: "200 when the store answers and a new connection would be accepted, 503 " +
      "otherwise (the store unreachable, the replica draining, or max_connections open).",
    responses: {
      200: {
        description: "The store answers.",
        content: { "application/json": { schema: ReadySchema } },
      },
    },
    "x-errors": [503001, 503002, 503003],
  }, async (c) => {
    // A draining replica must leave the load balancer before its runs are interrupted.
    if (!services.runs.accepting) throw errors.shuttingDown();
    // At the cap, new connections get 503 while this one (a kept-alive probe) is served: say so.
    if (services.saturated?.()) throw errors.tooManyConnections();
    try {
      await services.store.ping();
    } catch (err) {
      services.log.warn("store not ready", { error: (err as Error).message });
      throw errors.unavailable("the store");
    }
    return c.json({ status: "ready", store: services.store.kind });
  });

  if (services.metrics) {
    const scrape = metricsHandler(services.metrics);
    route(r, {
      method: "get",
      path: "/metrics",
      operationId: "metrics",
      tags: ["Health"],
      summary: "Prometheus metrics",
      description: "Runs, streams, model attempts, tools, pub/sub, store and HTTP metrics in " +
        "the Prometheus text format (0.0.4). Needs a key when API keys are on.",
      responses: {
        200: {
          description: "The metrics.",
          content: { "text/plain": { schema: { type: "string" } } },
        },
      },
    }, scrape);
  }
  return r;
}
