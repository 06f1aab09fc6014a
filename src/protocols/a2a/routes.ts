/**
 * HTTP routes of the A2A add-on, mounted under `protocol.a2a.path`: the JSON-RPC binding at the
 * base itself (./jsonrpc.ts) and the HTTP+JSON binding (spec §11, ./http_json.ts) under it:
 *
 * | method | path (also under `/{tenant}`)          | operation                                |
 * | ------ | -------------------------------------- | ---------------------------------------- |
 * | POST   | `/` (the base; no tenant prefix)       | JSON-RPC 2.0 (every method)              |
 * | GET    | `/.well-known/agent-card.json`         | Agent Card (no tenant prefix)            |
 * | POST   | `/message:send`                        | send a message                           |
 * | POST   | `/message:stream`                      | send a message, SSE updates              |
 * | GET    | `/tasks/{id}`                          | read a task (`historyLength`)            |
 * | POST   | `/tasks/{id}:cancel`                   | cancel a task                            |
 * | POST   | `/tasks/{id}:subscribe`                | SSE updates of a working task            |
 * | GET    | `/tasks`                               | list tasks (filters and paging in query) |
 * | any    | `/tasks/{id}/pushNotificationConfigs…` | PushNotificationNotSupportedError        |
 * | GET    | `/extendedAgentCard`                   | UnsupportedOperationError                |
 *
 * Every error, including the native ones shared code raises, answers the A2A error body; a path
 * under the base that no operation serves is a 404 or 405 in that body too.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type AppEnv, route, type Routes, routes } from "../../http/kit/mod.ts";
import { CARD_MAX_AGE, CARD_PATH, cardHandler } from "./discovery.ts";
import { a2aErrors } from "./errors.ts";
import { httpJsonErrorResponse, httpJsonRoutes } from "./http_json.ts";
import { JSON_RPC_METHODS, jsonRpcErrorResponse, jsonRpcHandler } from "./jsonrpc.ts";
import { A2A_BODY, A2A_ERROR, header, JSON_OBJECT, JSON_RPC_STREAM } from "./openapi.ts";

type Ctx = Context<AppEnv>;

/** Routes of the A2A add-on, mounted under its base path; the card was built at `cardModified`. */
export function a2aRoutes(cardModified: Date): Routes {
  const r = routes();
  route(r, card("a2aAgentCard", "The Agent Card (A2A discovery)"), cardHandler(cardModified));
  route(r, {
    method: "post",
    path: "/",
    operationId: "a2aJsonRpc",
    tags: ["A2A"],
    summary: "A2A JSON-RPC 2.0 binding (every A2A method)",
    description: `One JSON-RPC 2.0 request object; methods: ${JSON_RPC_METHODS.join(", ")}. ` +
      "`SendStreamingMessage` and `SubscribeToTask` answer SSE whose frames are JSON-RPC " +
      "responses. Errors are JSON-RPC error objects with the A2A codes (docs/a2a.md).",
    // Read by the JSON-RPC handler itself (a plain schema: not validated here), so a malformed
    // request is a JSON-RPC error rather than a 4xx.
    request: { body: { required: true, content: { "application/json": { schema: JSON_OBJECT } } } },
    responses: {
      200: {
        description: "A JSON-RPC response (or, for the streaming methods, an SSE stream of them).",
        headers: {
          "A2A-Extensions": header("The extensions the request activated (send methods)."),
        },
        content: { ...A2A_BODY, ...JSON_RPC_STREAM },
      },
      default: A2A_ERROR,
    },
  }, jsonRpcHandler);
  r.route("/", httpJsonRoutes(false));
  // The spec's tenant path prefix (`/{tenant}/message:send`, ...), as the SDK's REST client sends.
  r.route("/:tenant", httpJsonRoutes(true));
  r.all("*", (c) => {
    // Mounted at the root, everything would land here: leave what is not ours to the app.
    if (basePath(c) === "") return c.notFound();
    const rest = relativePath(c);
    // `<base>/` is the JSON-RPC endpoint too (a client configured with the trailing slash).
    if (rest === "/" && c.req.method === "POST") return jsonRpcHandler(c);
    const allowed = allowedMethods(rest);
    if (allowed.length > 0) {
      c.header("allow", allowed.join(", "));
      throw a2aErrors.methodNotAllowed(c.req.method, c.req.path);
    }
    throw a2aErrors.noRoute(c.req.method, c.req.path);
  });
  r.onError((err, c) => httpJsonErrorResponse(c, err));
  return r;
}

/**
 * The Agent Card alone, for the root `/.well-known/agent-card.json` (where A2A clients look for
 * it first), to be mounted at `/` by the app when the add-on is on.
 */
export function a2aWellKnownRoutes(cardModified: Date): Routes {
  const r = routes();
  const summary = "The Agent Card at the host root (same document as under the A2A base path)";
  route(r, card("a2aAgentCardAtRoot", summary), cardHandler(cardModified));
  r.onError((err, c) => httpJsonErrorResponse(c, err));
  return r;
}

/** The declaration of the agent card at `/.well-known/agent-card.json` (open without a key). */
function card(operationId: string, summary: string) {
  return {
    method: "get",
    path: CARD_PATH,
    operationId,
    tags: ["A2A"],
    summary,
    responses: {
      200: {
        description: "The Agent Card (304 with no body for a matching If-None-Match).",
        headers: {
          "Cache-Control": header(`\`public, max-age=${CARD_MAX_AGE}\`.`),
          ETag: header("Strong entity tag of the document."),
          "Last-Modified": header(
            "When the server started (the card changes only with the manifest).",
          ),
        },
        content: A2A_BODY,
      },
    },
  } satisfies RouteConfig;
}

/**
 * The answer to an error raised for a request to the add-on before it routed it (the app's API
 * key and tenant middleware): in the shape of the binding the request speaks — a JSON-RPC error
 * for `POST <base>`, the HTTP+JSON body for any other path under the base.
 */
export function a2aErrorResponse(c: Ctx, err: unknown): Response {
  const rest = relativePath(c);
  if (c.req.method === "POST" && (rest === "/" || rest === "")) return jsonRpcErrorResponse(c, err);
  return httpJsonErrorResponse(c, err);
}

/** The add-on's base path without a trailing slash ("" at the root). */
function basePath(c: Ctx): string {
  return (c.get("services").config.manifest.http_server?.protocol.a2a?.path ?? "/a2a")
    .replace(/\/+$/, "");
}

/** The request path relative to the add-on's base. */
function relativePath(c: Ctx): string {
  const base = basePath(c);
  const path = c.req.path;
  return path.startsWith(base) ? path.slice(base.length) || "/" : path;
}

const OPERATIONS: [string, RegExp][] = [
  ["POST", /^\/$/],
  ["GET", /^\/\.well-known\/agent-card\.json$/],
  ["POST", /^(\/[^/]+)?\/message:(send|stream)$/],
  ["GET", /^(\/[^/]+)?\/tasks$/],
  ["GET", /^(\/[^/]+)?\/tasks\/[^/]+$/],
  ["POST", /^(\/[^/]+)?\/tasks\/[^/]+:(cancel|subscribe)$/],
  ["GET", /^(\/[^/]+)?\/extendedAgentCard$/],
];

/** Methods some operation serves at `rest` (for 405 and `Allow`). */
function allowedMethods(rest: string): string[] {
  return [...new Set(OPERATIONS.filter(([, re]) => re.test(rest)).map(([m]) => m))].sort();
}
