/**
 * The HTTP side of the metrics: a middleware counting requests by route pattern and keeping the
 * gauge of open SSE streams, and the `GET /metrics` handler.
 */
import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { AgentdMetrics } from "./agentd.ts";
import { PROMETHEUS_CONTENT_TYPE } from "./registry.ts";

/** The protocol add-ons by name and base path, to tell their streams apart. */
export type StreamPaths = readonly { name: string; basePath: string }[];

/** The kind of an SSE stream from the request path: native, an add-on's name, or `other`. */
export function streamKind(path: string, addOns: StreamPaths): string {
  if (/^\/v1\/runs\/[^/]+\/events\/?$/.test(path)) return "reattach";
  if (/^\/v1\/runs\/?$/.test(path)) return "attached";
  const addOn = addOns.find((a) => path === a.basePath || path.startsWith(a.basePath + "/"));
  return addOn?.name ?? "other";
}

/** The route pattern that answered (`/v1/runs/:run_id`), or `unmatched` for a 404 route. */
function routeLabel(c: Context): string {
  const route = routePath(c, -1);
  return route === "*" || route === "/*" || route === "" ? "unmatched" : route;
}

/**
 * Calls `onClose` once when the body of `res` ends, fails or is cancelled, when the body can say
 * so itself (the HTTP kit's SSE responses); false, never calling it, when it cannot.
 */
export type BodyCloseWatch = (res: Response, onClose: () => void) => boolean;

/**
 * Counts every request (`agentd_http_requests_total`, `agentd_http_request_duration_seconds`)
 * and, for SSE responses, holds `agentd_streams_open{kind}` up while the stream is open: told of
 * the body's end (and of the client going away) by `watchClose` when it can, else by passing the
 * body through a stream that notices them.
 */
export function httpMetrics(
  metrics: AgentdMetrics,
  addOns: StreamPaths,
  watchClose?: BodyCloseWatch,
): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const method = c.req.method;
    const route = routeLabel(c);
    metrics.httpRequests.inc({ method, route, status: String(c.res.status) });
    metrics.httpDuration.observe({ method, route }, (performance.now() - started) / 1000);
    const type = c.res.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream") && c.res.body) {
      const kind = streamKind(c.req.path, addOns);
      metrics.streamsOpen.inc({ kind });
      const closed = () => metrics.streamsOpen.dec({ kind });
      if (!watchClose?.(c.res, closed)) c.res = whileOpen(c.res, closed);
    }
  };
}

/** `res` with a body that calls `onClose` once, when it ends, fails or is cancelled. */
function whileOpen(res: Response, onClose: () => void): Response {
  const reader = res.body!.getReader();
  let open = true;
  const close = () => {
    if (open) {
      open = false;
      onClose();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          close();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (err) {
        close();
        controller.error(err);
      }
    },
    cancel(reason) {
      close();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** `GET /metrics`: the registry in the Prometheus text format 0.0.4. */
export function metricsHandler(metrics: AgentdMetrics): (c: Context) => Response {
  return (c) => c.body(metrics.registry.render(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE });
}
