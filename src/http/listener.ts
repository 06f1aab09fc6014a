/**
 * The HTTP listener: a `node:http` server (Deno's implementation of Node's, with llhttp and Node's
 * timeout machinery) feeding the Hono app through `@hono/node-server`. Not `Deno.serve`, which has
 * no header, body or idle timeout and no connection cap (denoland/deno#3515): a client there can
 * hold a connection forever by sending nothing, half a request or half a body.
 *
 * What it enforces (`http_server` settings, docs/deploy.md "Timeouts and limits"):
 * - `header_timeout`: the headers of a request must arrive within it (408, closed);
 * - `request_timeout`: the whole request, body included, must arrive within it (408, closed); a
 *   response may stream for as long as it needs;
 * - `idle_timeout`: a keep-alive connection idle between requests is closed;
 * - `max_connections`: one connection more is answered 503 with `Retry-After` before any request
 *   of it reaches the app, and closed within a second whether the client read it or not; past
 *   `MAX_REFUSING` such answers under way, more are closed at once. The cap is lowered to what
 *   the open-files limit leaves (open_files.ts), and the accept loop is watched (accept_watch.ts):
 *   a listener out of descriptors must not stop accepting for good;
 * - malformed requests (bad header bytes, 16 KiB of headers or URL exceeded, no or an invalid
 *   `Host`) are answered 400/431 with the JSON error body, and never reach the app.
 */
import { getRequestListener } from "@hono/node-server";
import type { Span } from "@opentelemetry/api";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { watchAccept } from "./accept_watch.ts";
import { ACCEPT_BACKLOG, connectionCap, MAX_REFUSING, openFilesLimit } from "./open_files.ts";
import { type ApiError, errors } from "../errors.ts";
import { markTimedOut } from "./kit/mod.ts";
import type { Logger } from "../log.ts";
import { type AgentdMetrics, withActiveSpan } from "../metrics/mod.ts";
import type { CLIENT_ERROR_REASONS } from "../metrics/mod.ts";

/** What the listener enforces (the `http_server` settings of the same names). */
export interface WireLimits {
  header_timeout: number;
  request_timeout: number;
  idle_timeout: number;
  max_connections: number;
}

/** Options of `listen`. */
export interface ListenOptions {
  host: string;
  port: number;
  limits: WireLimits;
  log: Logger;
  metrics?: AgentdMetrics;
  /** The open-files limit the cap must fit under; this process's (`ulimit -n`) by default. */
  openFiles?: number;
}

/** How long a connection answered 503 over the cap may stay open for its client to read it. */
const REFUSED_LINGER_MS = 1_000;

/** A listening server. */
export interface Listener {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  /** Connections open now. */
  readonly connections: number;
  /** The connection cap served with: `max_connections`, or less to fit the open-files limit. */
  readonly maxConnections: number;
  /** Whether `maxConnections` connections are open (a new one would be refused). */
  readonly saturated: boolean;
  /**
   * Stops accepting connections, closes idle ones, gives the responses still being written
   * `flushMs` to finish, then closes every connection left.
   */
  close(flushMs?: number): Promise<void>;
  /** Resolves when the server has closed. */
  finished: Promise<void>;
}

/** Why a connection ended without a request reaching the app (`agentd_http_client_errors_total`). */
export type ClientErrorReason = typeof CLIENT_ERROR_REASONS[number];

/** Serves `fetch` (the Hono app's) on `host:port` with the wire limits. */
export async function listen(
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<Listener> {
  const { limits, log, metrics } = options;
  const handle = getRequestListener(fetch, {
    // Leave the global Request/Response alone: the rest of the process (providers, tools) uses them.
    overrideGlobalObjects: false,
    // A request the adapter cannot make a URL of (no `Host`, an invalid one, a backslash in the
    // path) gets the JSON error body, not the adapter's bare 400; the app never sees it.
    errorHandler: (err) => {
      if (!(err instanceof Error) || err.name !== "RequestError") {
        return Response.json(errors.internal().toBody(), { status: 500 });
      }
      metrics?.clientErrors.inc({ reason: "malformed" });
      log.debug("client error", { reason: "malformed", error: err.message });
      const error = errors.malformedHttp(err.message.toLowerCase());
      // Closed after, like the listener's other answers to a malformed request.
      return Response.json(error.toBody(), {
        status: error.status,
        headers: { connection: "close" },
      });
    },
  });
  // Sockets over the cap: their requests must never run (the client was told 503).
  const refused = new WeakSet<Socket>();
  const server: Server = createServer({
    headersTimeout: limits.header_timeout,
    requestTimeout: limits.request_timeout,
    keepAliveTimeout: limits.idle_timeout,
    // Node checks the header and request timeouts on this interval (30 s by default, which would
    // let a 1 s timeout run for 31 s): a tenth of the shorter one keeps them within 10 %.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, limits.header_timeout / 10)),
    // Node's own answer to an HTTP/1.1 request without `Host` is a bare 400: the adapter's
    // error handler above answers it with the JSON body instead.
    requireHostHeader: false,
  }, (req: IncomingMessage, res: ServerResponse) => {
    if (refused.has(req.socket)) return;
    // Deno traces node:http requests but does not make the request's span the active one while
    // the handler runs: without this, a run's spans would start a trace of their own.
    withActiveSpan(requestSpan(res), () => void handle(req, res));
  });

  const limit = options.openFiles ?? openFilesLimit();
  const cap = connectionCap(limits.max_connections, limit);
  if (cap < limits.max_connections) {
    log.warn("max_connections lowered to fit the open-files limit", {
      max_connections: limits.max_connections,
      open_files_limit: limit,
      serving_at_most: cap,
    });
  }
  const open = new Set<Socket>();
  const refusing = new Set<Socket>();
  const refuse = (socket: Socket) => {
    refused.add(socket);
    metrics?.connectionsRefused.inc();
    log.debug("connection refused", { open: open.size, max_connections: cap });
    // A flood is not answered one by one: each answer holds a descriptor while it is read.
    if (refusing.size >= MAX_REFUSING) {
      socket.destroy();
      return;
    }
    refusing.add(socket);
    // Closed, not left half-closed: a client that never reads or closes must not keep it.
    const timer = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
    socket.once("close", () => {
      refusing.delete(socket);
      clearTimeout(timer);
    });
    socket.end(rawResponse(errors.tooManyConnections(), { "retry-after": "1" }));
  };
  // Set once listening; a check connection of it is neither counted nor served.
  // deno-lint-ignore prefer-const -- read by the connection listener, which exists before it
  let watch: ReturnType<typeof watchAccept> | undefined;
  // Before Node's own connection listener, so a refused socket is marked before it parses.
  server.prependListener("connection", (socket: Socket) => {
    if (watch?.isCheck(socket)) {
      socket.destroy();
      return;
    }
    if (open.size >= cap) {
      refuse(socket);
      return;
    }
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  metrics?.connectionsOpen.collectWith(() => metrics.connectionsOpen.set(undefined, open.size));

  server.on("clientError", (err: Error & { code?: string }, socket: Socket) => {
    // A refused socket has its answer on the way out; what it sent after is not read.
    if (refused.has(socket)) return;
    const reason = clientErrorReason(err.code);
    metrics?.clientErrors.inc({ reason });
    log.debug("client error", { reason, error: err.message });
    // A reset socket cannot be written; one with a response under way must not get a second.
    const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (reason === "reset" || !socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    if (reason === "timeout") markTimedOut(socket);
    socket.end(rawResponse(clientErrorOf(reason)));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: options.port, host: options.host, backlog: ACCEPT_BACKLOG }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("not a TCP listener");
  const host = address.address.includes(":") ? `[${address.address}]` : address.address;
  watch = watchAccept(server, address.address, address.port, log);
  // Resolved by close(): the watch may close and open the listening socket again meanwhile.
  const done = Promise.withResolvers<void>();

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    get connections() {
      return open.size;
    },
    maxConnections: cap,
    get saturated() {
      return open.size >= cap;
    },
    finished: done.promise,
    close: (flushMs = 1000) =>
      closing ??= (async () => {
        watch!.stop();
        const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
        server.close();
        server.closeIdleConnections();
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          closed,
          new Promise<void>((resolve) => timer = setTimeout(resolve, flushMs)),
        ]);
        clearTimeout(timer);
        server.closeAllConnections();
        for (const socket of refusing) socket.destroy();
        await closed;
        done.resolve();
      })(),
  };
}

/**
 * Deno's OpenTelemetry span of a `node:http` request (OTEL_DENO=true), which Deno keeps on the
 * response under a symbol it does not export; undefined without telemetry or if Deno renames it
 * (then spans are unparented, which tests/metrics/tracing_test.ts would catch).
 */
function requestSpan(res: ServerResponse): Span | undefined {
  const key = Object.getOwnPropertySymbols(res).find((s) => s.description === "kOtelSpan");
  return key ? (res as unknown as Record<symbol, Span | undefined>)[key] : undefined;
}

function clientErrorReason(code: string | undefined): ClientErrorReason {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return "timeout";
    case "HPE_HEADER_OVERFLOW":
      return "headers_too_large";
    case "ECONNRESET":
    case "EPIPE":
      return "reset";
    default:
      return "malformed";
  }
}

function clientErrorOf(reason: ClientErrorReason): ApiError {
  switch (reason) {
    case "timeout":
      return errors.requestTimeout();
    case "headers_too_large":
      return errors.headersTooLarge();
    default:
      return errors.malformedHttp();
  }
}

/** A whole HTTP/1.1 response with the error's JSON body, for a socket the app never sees. */
function rawResponse(error: ApiError, headers: Record<string, string> = {}): string {
  const body = JSON.stringify(error.toBody());
  const lines = [
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? "Error"}`,
    "connection: close",
    "content-type: application/json",
    `content-length: ${new TextEncoder().encode(body).byteLength}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};
