/**
 * HTTP routes of the A2A add-on, mounted under `protocol.a2a.path`: the JSON-RPC binding at the
 * base itself (./jsonrpc.ts) and the HTTP+JSON binding (spec §11) under it:
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
 * | GET    | `/tasks`                               | UnsupportedOperationError (no listing)   |
 * | any    | `/tasks/{id}/pushNotificationConfigs…` | PushNotificationNotSupportedError        |
 * | GET    | `/extendedAgentCard`                   | UnsupportedOperationError                |
 *
 * Every error, including the native ones shared code raises, answers the A2A error body.
 */
import { type Context, Hono } from "hono";
import {
  apiErrorOf,
  type AppEnv,
  bodyLimit,
  keepaliveMs,
  readJson,
  sseFrame,
  sseResponse,
  validate,
} from "../../http/kit/mod.ts";
import { errors } from "../../errors.ts";
import { type A2aCall, callOf as resolveCall, checkVersion, extensionHeader } from "./call.ts";
import { CARD_PATH, cardHandler } from "./discovery.ts";
import { A2aError, a2aErrors, fromApiError } from "./errors.ts";
import { jsonRpcHandler } from "./jsonrpc.ts";
import {
  cancelTask,
  getTask,
  prepareSend,
  sendMessage,
  streamMessage,
  subscribeTask,
} from "./operations.ts";
import {
  CancelTaskRequestSchema,
  SendMessageRequestSchema,
  type StreamResponse,
} from "./schemas.ts";

type Ctx = Context<AppEnv>;

/** The A2A media type the binding prefers (spec §11.1); we answer it to clients that ask. */
const A2A_JSON = "application/a2a+json";

/** Routes of the A2A add-on, mounted under its base path; the card was built at `cardModified`. */
export function a2aRoutes(cardModified: Date): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get(CARD_PATH, cardHandler(cardModified));
  r.post("/", jsonRpcHandler);
  const ops = operationRoutes();
  r.route("/", ops);
  // The spec's tenant path prefix (`/{tenant}/message:send`, ...), as the SDK's REST client sends.
  r.route("/:tenant", ops);
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
  r.onError((err, c) => errorResponse(c, err));
  return r;
}

/**
 * The Agent Card alone, for the root `/.well-known/agent-card.json` (where A2A clients look for
 * it first), to be mounted at `/` by the app when the add-on is on.
 */
export function a2aWellKnownRoutes(cardModified: Date): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get(CARD_PATH, cardHandler(cardModified));
  r.onError((err, c) => errorResponse(c, err));
  return r;
}

/** The operations, relative to the base (mounted with and without the tenant prefix). */
function operationRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post("/message:send", async (c) => {
    checkServiceParameters(c);
    const body = validate(SendMessageRequestSchema, await readJson(c, bodyLimit(c)));
    const call = callOf(c, body.tenant);
    const prepared = await prepareSend(call, body);
    const task = await sendMessage(call, prepared);
    return ok(c, { task }, extensionHeader(prepared.activated));
  });

  r.post("/message:stream", async (c) => {
    checkServiceParameters(c);
    const body = validate(SendMessageRequestSchema, await readJson(c, bodyLimit(c)));
    const call = callOf(c, body.tenant);
    const prepared = await prepareSend(call, body);
    // Started before the response, so a refused request is a JSON error, not a broken stream.
    const updates = await streamMessage(call, prepared);
    // No `onClientGone`: a client that drops the stream does not cancel the task.
    return sseResponse(frames(updates), {
      keepaliveMs: keepaliveMs(c),
      headers: extensionHeader(prepared.activated),
    });
  });

  r.get("/tasks", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.unsupported("listing tasks is not supported by this agent; read a task by id");
  });

  r.get("/tasks/:ref", async (c) => {
    checkServiceParameters(c);
    const call = callOf(c);
    const task = await getTask(call, c.req.param("ref"), {
      historyLength: historyLengthOf(c.req.query("historyLength")),
    });
    return ok(c, task);
  });

  r.post("/tasks/:ref", async (c) => {
    checkServiceParameters(c);
    const ref = c.req.param("ref");
    const at = ref.lastIndexOf(":");
    const action = at > 0 ? ref.slice(at + 1) : "";
    const id = ref.slice(0, at);
    // Cancel and subscribe take an optional body (the id is in the path); read within the limit.
    if (action === "cancel") {
      const body = await readJson(c, bodyLimit(c), { optional: true });
      const request = body === undefined ? {} : validate(CancelTaskRequestSchema, body);
      if (request.id && request.id !== id) {
        throw a2aErrors.invalid(`the body names task '${request.id}', the path '${id}'`, [{
          field: "id",
          description: "must match the task id of the path",
        }]);
      }
      return ok(c, await cancelTask(callOf(c, request.tenant), id));
    }
    if (action === "subscribe") {
      const body = await readJson(c, bodyLimit(c), { optional: true });
      const tenant = body === undefined
        ? undefined
        : validate(CancelTaskRequestSchema, body).tenant;
      const updates = await subscribeTask(callOf(c, tenant), id);
      return sseResponse(frames(updates), { keepaliveMs: keepaliveMs(c) });
    }
    if (at < 0) {
      c.header("allow", "GET");
      throw a2aErrors.methodNotAllowed("POST", c.req.path);
    }
    throw a2aErrors.noRoute("POST", c.req.path);
  });

  // Push notifications are not supported (spec §3.3.4: every config operation says so).
  r.all("/tasks/:ref/pushNotificationConfigs", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.pushNotSupported();
  });
  r.all("/tasks/:ref/pushNotificationConfigs/*", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.pushNotSupported();
  });

  r.get("/extendedAgentCard", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.unsupported(
      "this agent has no extended agent card (capabilities.extendedAgentCard is false)",
    );
  });

  return r;
}

/** Service parameters (spec §3.2.6): `A2A-Version` must be 1.0 when given. */
function checkServiceParameters(c: Ctx): void {
  checkVersion(c);
}

/** The call of a request: the `/{tenant}` path prefix, the body's `tenant`, `X-Tenant-ID`. */
function callOf(c: Ctx, bodyTenant?: string | null): A2aCall {
  const path = c.req.param("tenant" as never) as string | undefined;
  return resolveCall(c, [["the path", path], ["the body's tenant", bodyTenant]]);
}

/** `historyLength` of a task read: a non-negative integer, or unset. */
function historyLengthOf(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d+$/.test(value)) {
    throw a2aErrors.invalid(`historyLength must be a non-negative integer, got '${value}'`, [{
      field: "historyLength",
      description: "must be a non-negative integer",
    }]);
  }
  return Number(value);
}

/** A JSON success response, as `application/a2a+json` to clients that accept it. */
function ok(c: Ctx, body: unknown, headers: Record<string, string> = {}): Response {
  const accept = c.req.header("accept") ?? "";
  const type = accept.toLowerCase().includes(A2A_JSON) ? A2A_JSON : "application/json";
  return c.body(JSON.stringify(body), 200, { ...headers, "content-type": type });
}

/** An error as the A2A body (`application/json`); unexpected ones are logged and hidden. */
function errorResponse(c: Ctx, err: Error): Response {
  let error: A2aError;
  const known = apiErrorOf(err);
  if (err instanceof A2aError) error = err;
  else if (known) error = fromApiError(known);
  else {
    c.get("services")?.log.error("unhandled error", {
      request_id: c.get("requestId"),
      error: err?.stack ?? String(err),
    });
    error = fromApiError(errors.internal());
  }
  return c.json(error.toBody(), error.status as 400);
}

async function* frames(updates: AsyncIterable<StreamResponse>): AsyncGenerator<string> {
  for await (const update of updates) yield sseFrame(update);
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
