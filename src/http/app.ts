/**
 * The Hono application: middleware (request id, logging, tenant, errors), the native `/v1` routes
 * and the protocol add-ons, built from the services it is given — no global state, so tests run
 * many independent apps in one process.
 */
import { Hono } from "hono";
import type { Config } from "../config/schema.ts";
import { ApiError, errors } from "../errors.ts";
import { type Logger, withLogContext } from "../log.ts";
import { type AgentdMetrics, httpMetrics, metricsHandler } from "../metrics/mod.ts";
import type { Store } from "../store/types.ts";
import type { RunService } from "../runs/service.ts";
import { ClientIdSchema } from "../api/schemas.ts";
import { v1Routes } from "./v1/mod.ts";
import { apiKeyAuth, type ApiKeyIdentity } from "./auth.ts";
import { docsRoutes } from "./openapi/mod.ts";
import { agUiRoutes } from "../protocols/ag_ui/mod.ts";
import { a2aRoutes, a2aWellKnownRoutes } from "../protocols/a2a/mod.ts";
import { playgroundRoutes } from "./playground/mod.ts";

/** What the routes need. */
export interface AppServices {
  config: Config;
  store: Store;
  runs: RunService;
  log: Logger;
  /** Prometheus metrics: counted by a middleware and served at `GET /metrics` when given. */
  metrics?: AgentdMetrics;
}

/** Per-request values the middleware sets. */
export interface AppEnv {
  Variables: {
    requestId: string;
    tenant: string;
    services: AppServices;
    /** The API key the request authenticated with (API keys on, non-public routes). */
    apiKey: ApiKeyIdentity | undefined;
  };
}

const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

const PROBE_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** Builds the application for one set of services. */
export function createApp(services: AppServices): Hono<AppEnv> {
  const { config, log } = services;
  const defaultTenant = config.manifest.runtime.default_tenant_id;
  const app = new Hono<AppEnv>();

  app.use("*", async (c, next) => {
    const given = c.req.header("x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", requestId);
    c.set("services", services);
    const started = performance.now();
    // Every line logged while handling the request (and by runs it starts) carries its id.
    await withLogContext({ request_id: requestId }, next);
    c.header("x-request-id", requestId);
    // Probes and scrapes arrive every few seconds: keep them out of the info stream.
    const level = PROBE_PATHS.has(c.req.path) && c.res.status < 400 ? "debug" : "info";
    log[level]("request", {
      request_id: requestId,
      tenant: c.get("tenant"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });

  if (services.metrics) {
    const protocols = config.manifest.http_server?.protocol;
    app.use(
      "*",
      httpMetrics(services.metrics, { ag_ui: protocols?.ag_ui?.path, a2a: protocols?.a2a?.path }),
    );
  }

  app.use("*", apiKeyAuth(config.manifest, log));

  app.use("*", async (c, next) => {
    const header = c.req.header("x-tenant-id");
    if (header === undefined) {
      // A tenant-bound API key decides the tenant (a conflicting header was refused, 403001).
      c.set("tenant", c.get("apiKey")?.tenant ?? defaultTenant);
    } else {
      const parsed = ClientIdSchema.safeParse(header);
      if (!parsed.success) {
        throw errors.badTenant(
          header === ""
            ? "it is empty"
            : header.length > 128
            ? "it is longer than 128 characters"
            : "it may hold only letters, digits, '.', '_', ':' and '-'",
        );
      }
      c.set("tenant", header);
    }
    await next();
  });

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  if (services.metrics) app.get("/metrics", metricsHandler(services.metrics));
  app.get("/readyz", async (c) => {
    // A draining replica must leave the load balancer before its runs are interrupted.
    if (!services.runs.accepting) throw errors.shuttingDown();
    try {
      await services.store.ping();
    } catch (err) {
      log.warn("store not ready", { error: (err as Error).message });
      throw errors.unavailable("the store");
    }
    return c.json({ status: "ready", store: services.store.kind });
  });

  app.route("/", docsRoutes());
  app.route("/v1", v1Routes());
  app.route("/", playgroundRoutes());
  const protocol = config.manifest.http_server?.protocol;
  if (protocol?.ag_ui) app.route(protocol.ag_ui.path, agUiRoutes());
  if (protocol?.a2a) {
    app.route(protocol.a2a.path, a2aRoutes());
    // The root card, for clients that discover from the host; the base path card stays canonical.
    if (protocol.a2a.path.replace(/\/+$/, "") !== "") app.route("/", a2aWellKnownRoutes());
  }

  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    const err = allowed.length > 0
      ? errors.methodNotAllowed(c.req.method, c.req.path)
      : errors.routeNotFound(c.req.method, c.req.path);
    if (allowed.length > 0) c.header("allow", allowed.join(", "));
    return c.json(err.toBody(), err.status as 404);
  });

  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json(err.toBody(), err.status as 400);
    log.error("unhandled error", {
      request_id: c.get("requestId"),
      error: (err as Error)?.stack ?? String(err),
    });
    const internal = errors.internal();
    return c.json(internal.toBody(), 500);
  });

  return app;
}

/** Methods that some route serves at `path` (for 405 with `Allow`). */
function allowedMethods(app: Hono<AppEnv>, path: string): string[] {
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    if (routePattern(route.path).test(path)) methods.add(route.method);
  }
  return [...methods].sort();
}

const patternCache = new Map<string, RegExp>();

function routePattern(path: string): RegExp {
  let re = patternCache.get(path);
  if (!re) {
    const body = path.split("/").map((seg) =>
      seg.startsWith(":")
        ? "[^/]+"
        : seg === "*"
        ? ".*"
        : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("/");
    re = new RegExp(`^${body}/?$`);
    patternCache.set(path, re);
  }
  return re;
}
