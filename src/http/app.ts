/**
 * The Hono application: middleware (request id, logging, tenant, errors), the native `/v1` routes
 * and the protocol add-ons it is handed, built from the services it is given — no global state, so
 * tests run many independent apps in one process.
 */
import { cors } from "hono/cors";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./kit/mod.ts";
import { methodNotAllowed } from "hono/method-not-allowed";
import { errors } from "../errors.ts";
import { withLogContext } from "../log.ts";
import { httpMetrics } from "../metrics/mod.ts";
import { ClientIdSchema } from "../api/schemas.ts";
import type { CorsConfig } from "../config/schema/http_server.ts";
import { agentRoutes, v1Routes } from "./v1/mod.ts";
import { apiKeyAuth } from "./kit/mod.ts";
import type { AddOn } from "./kit/mod.ts";
import type { AppServices } from "./kit/mod.ts";
import { watchUnread } from "./unread_watch.ts";
import { errorResponse, onSseClose } from "./kit/mod.ts";
import { type Routes, routes } from "./kit/mod.ts";
import { healthRoutes } from "./health.ts";
import { buildOpenApiDocument, docsRoutes } from "./openapi/mod.ts";
import { isPlaygroundAsset, playgroundRoutes } from "./playground/mod.ts";

const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

const PROBE_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/** Builds the application for one set of services and the add-ons the manifest switches on. */
export function createApp(services: AppServices, addOns: readonly AddOn[] = []): Routes {
  const { config, log } = services;
  const defaultTenant = config.manifest.runtime.default_tenant_id;
  const app = routes();

  app.use("*", async (c, next) => {
    const given = c.req.header("x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    c.set("requestId", requestId);
    c.set("services", services);
    const started = performance.now();
    // Every line logged while handling the request (and by runs it starts) carries its id.
    await withLogContext({ request_id: requestId }, next);
    c.header("x-request-id", requestId);
    // Every 503 (store unreachable, shutting down, at capacity) and 429 (a tenant at its run
    // limits) is worth a retry soon.
    const retry = c.res.status === 503 || c.res.status === 429;
    if (retry && !c.res.headers.has("retry-after")) c.header("retry-after", "1");
    // Probes and scrapes arrive every few seconds, and a page load fetches a dozen playground
    // files: keep them out of the info stream.
    const quiet = PROBE_PATHS.has(c.req.path) || isPlaygroundAsset(c.req.path);
    const level = quiet && c.res.status < 400 ? "debug" : "info";
    // A client that hung up mid-request got no answer: its own line, not a failed request.
    const msg = c.res.status === 499 ? "client closed the request" : "request";
    log[level](msg, {
      request_id: requestId,
      tenant: c.get("tenant"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });

  // Before the API key check: a browser's preflight carries no credentials.
  const corsConfig = config.manifest.http_server?.cors;
  if (corsConfig) app.use("*", corsMiddleware(corsConfig));
  else app.use("*", corsOffPreflight);

  if (services.metrics) {
    app.use("*", httpMetrics(services.metrics, addOns, onSseClose));
  }

  app.use("*", watchUnread(config.manifest.runtime.attached, log));

  app.use("*", apiKeyAuth(config.manifest, log, addOns.flatMap((a) => a.publicPaths)));

  // A path some route serves, asked with another method: 405 with `Allow` instead of 404.
  app.use(
    "*",
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        const err = errors.methodNotAllowed(c.req.method, c.req.path);
        return c.json(err.toBody(), 405, { allow: methods.toSorted().join(", ") });
      },
    }),
  );

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

  app.route("/", healthRoutes(services));
  app.route("/", docsRoutes(() => buildOpenApiDocument(app, config.manifest, addOns)));
  app.route("/v1", v1Routes());
  app.route("/v1", agentRoutes(addOns));
  app.route("/", playgroundRoutes());
  for (const addOn of addOns) {
    app.route(addOn.basePath || "/", addOn.routes);
    if (addOn.rootRoutes) app.route("/", addOn.rootRoutes);
  }

  app.notFound((c) => {
    const err = errors.routeNotFound(c.req.method, c.req.path);
    return c.json(err.toBody(), 404);
  });
  app.onError((err, c) => {
    // Raised before routing (API key, tenant header) for a request to an add-on: its shape.
    const path = c.req.path;
    const owner = addOns.find((a) =>
      a.errorResponse && a.basePath !== "" &&
      (path === a.basePath || path.startsWith(`${a.basePath}/`))
    );
    return owner?.errorResponse ? owner.errorResponse(c, err) : errorResponse(c, err);
  });
  return app;
}

/**
 * A browser's CORS preflight to a server without `http_server { cors }`: the page cannot call this
 * server, and the answer says how to allow its origin instead of a bare 405 (the browser shows
 * only a CORS failure; the body is for the developer reading the network panel or using curl).
 */
const corsOffPreflight: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("origin");
  if (c.req.method !== "OPTIONS" || !origin || !c.req.header("access-control-request-method")) {
    return await next();
  }
  const err = errors.methodNotAllowed("OPTIONS", c.req.path);
  return c.json({
    code: err.code,
    message: `CORS is off on this server, so a page at ${origin} cannot call it. Allow the ` +
      `origin in the manifest: http_server { cors { allow_origins = [${
        JSON.stringify(origin)
      }] } } (docs/configuration.md, http_server.cors)`,
  }, 405);
};

/** Request headers a browser page may send to any route (besides the CORS-safelisted ones). */
const CORS_ALLOW_HEADERS = [
  "content-type",
  "authorization",
  "x-api-key",
  "x-tenant-id",
  "x-request-id",
  "last-event-id",
  "a2a-version",
  "a2a-extensions",
];

/** Response headers a browser page may read (besides the CORS-safelisted ones). */
const CORS_EXPOSE_HEADERS = [
  "x-request-id",
  "location",
  "x-run-id",
  "x-session-id",
  "x-steered",
  "allow",
  "retry-after",
  "a2a-extensions",
  "x-vercel-ai-ui-message-stream",
];

/**
 * Whether an origin is one of `patterns`: an exact origin, or one ending in `:*` for that scheme
 * and host on any port, the default one included (`http://localhost:*`, what `serve --watch`
 * allows by default).
 */
export function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith(":*")));
  const anyPort = patterns.filter((p) => p.endsWith(":*")).map((p) => p.slice(0, -1));
  return (origin) =>
    exact.has(origin) ||
    anyPort.some((head) =>
      origin === head.slice(0, -1) ||
      (origin.startsWith(head) && /^\d{1,5}$/.test(origin.slice(head.length)))
    );
}

/**
 * `hono/cors` for `http_server { cors { ... } }`: the listed origins (or any, with `"*"`) may call
 * every route, and preflights are answered before anything else looks at the request.
 */
function corsMiddleware(config: CorsConfig) {
  const any = config.allow_origins.includes("*");
  const allowed = originMatcher(config.allow_origins);
  return cors({
    origin: any ? "*" : (origin) => allowed(origin) ? origin : null,
    allowMethods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
    allowHeaders: [...new Set([...CORS_ALLOW_HEADERS, ...config.allow_headers])],
    exposeHeaders: [...new Set([...CORS_EXPOSE_HEADERS, ...config.expose_headers])],
    credentials: config.allow_credentials,
    maxAge: config.max_age,
  });
}
