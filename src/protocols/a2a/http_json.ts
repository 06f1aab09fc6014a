/**
 * The HTTP+JSON binding of the A2A add-on (spec §11), relative to the base and mounted with and
 * without the spec's `/{tenant}` path prefix: each operation a route that decodes the request,
 * calls the operation (operations.ts, send.ts, subscribe.ts) and answers its result as JSON (or
 * its frames as SSE), or its error as a `google.rpc.Status` body.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import {
  type AppEnv,
  bodyLimit,
  jsonBody,
  keepaliveMs,
  readJson,
  route,
  type RouteContext,
  type Routes,
  routes,
  sseFrame,
  sseResponse,
  validate,
} from "../../http/kit/mod.ts";
import {
  type A2aCall,
  callOf as resolveCall,
  checkVersion,
  extensionHeader,
  taskCursor,
} from "./call.ts";
import type { A2aFrame } from "./encoder.ts";
import { a2aErrors, asA2aError } from "./errors.ts";
import { logUnexpected } from "./jsonrpc.ts";
import { A2A_BODY, A2A_ERROR, A2A_STREAM, a2aJson } from "./openapi.ts";
import { ListTasksResponseSchema, SendMessageResponseSchema, TaskSchema } from "./responses.ts";
import { cancelTask, getTask, listTasks } from "./operations.ts";
import {
  CancelTaskRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
} from "./schemas.ts";
import { prepareSend, sendMessage, streamMessage } from "./send.ts";
import { subscribeTask } from "./subscribe.ts";

type Ctx = Context<AppEnv>;

/** The A2A media type the binding prefers (spec §11.1); we answer it to clients that ask. */
const A2A_JSON = "application/a2a+json";

const TASK = z.object({ id: z.string().describe("The task id (a native run id).") });
const TENANT = z.string().describe("The tenant (instead of `X-Tenant-ID`).");

/** Route middleware checking the A2A service parameters before anything else is read. */
const serviceParameters: MiddlewareHandler<AppEnv> = async (c, next) => {
  checkServiceParameters(c);
  await next();
};

/** The operations, relative to the base (mounted with and without the tenant prefix). */
export function httpJsonRoutes(tenant: boolean): Routes {
  const r = routes();
  // Under `/{tenant}` each operation is served with the `tenant` parameter, and documented only
  // once, without the prefix (see `TENANT_PREFIX`).
  const declare = <R extends RouteConfig>(
    declaration: R,
    handler: (c: RouteContext<R>) => Response | Promise<Response>,
  ) =>
    tenant
      ? route(r, forTenant(declaration), handler, { documented: false })
      : route(r, withTenantPrefix(declaration), handler);
  const send = {
    method: "post",
    tags: ["A2A"],
    middleware: [serviceParameters, jsonBody()],
    request: {
      body: {
        required: true,
        content: { "application/json": { schema: SendMessageRequestSchema } },
      },
    },
  } satisfies Partial<RouteConfig>;

  declare({
    ...send,
    path: "/message:send",
    operationId: "a2aSendMessage",
    summary: "Send a message (answers the task)",
    responses: {
      200: { description: '`{"task": Task}`.', content: a2aJson(SendMessageResponseSchema) },
      default: A2A_ERROR,
    },
  }, async (c) => {
    const body = c.req.valid("json");
    const call = callOf(c, body.tenant);
    const prepared = await prepareSend(call, body);
    const task = await sendMessage(call, prepared);
    return ok(c, { task }, extensionHeader(prepared.activated));
  });

  declare({
    ...send,
    path: "/message:stream",
    operationId: "a2aStreamMessage",
    summary: "Send a message, stream the task's updates",
    responses: {
      200: { description: "The task's updates.", content: A2A_STREAM },
      default: A2A_ERROR,
    },
  }, async (c) => {
    const body = c.req.valid("json");
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

  const text = (description: string, meta: Record<string, unknown> = {}) =>
    z.string().optional().meta({ description, ...meta });
  declare({
    method: "get",
    path: "/tasks",
    operationId: "a2aListTasks",
    tags: ["A2A"],
    summary: "List tasks (filters and paging in the query)",
    middleware: serviceParameters,
    request: {
      // Read by `listQuery`, whose refusals are A2A InvalidParams errors.
      query: z.object({
        tenant: text("The tenant (instead of the path's or `X-Tenant-ID`)."),
        contextId: text("Only this context's tasks."),
        status: text("Only tasks in this state (`TASK_STATE_WORKING`, ...)."),
        pageSize: text("Tasks per page, 1 to 100 (default 50).", { type: "integer" }),
        pageToken: text("`nextPageToken` of the previous page."),
        historyLength: text("Most history messages per task (unset: none).", {
          type: "integer",
        }),
        statusTimestampAfter: text("ISO 8601: only tasks whose status changed at or after it."),
        includeArtifacts: text("`true`: include each task's artifacts.", { type: "boolean" }),
      }),
    },
    responses: {
      200: { description: "`ListTasksResponse`.", content: a2aJson(ListTasksResponseSchema) },
      default: A2A_ERROR,
    },
  }, async (c) => {
    const request = validate(ListTasksRequestSchema, listQuery(c.req.valid("query")));
    return ok(c, await listTasks(callOf(c, request.tenant), request));
  });

  declare({
    method: "get",
    path: "/tasks/{id}",
    operationId: "a2aGetTask",
    tags: ["A2A"],
    summary: "Read a task",
    middleware: serviceParameters,
    request: {
      params: TASK,
      // Read by `historyLengthOf`, whose refusal is an A2A InvalidParams error.
      query: z.object({
        historyLength: z.string().optional()
          .meta({ type: "integer", minimum: 0, description: "Most history messages to include." }),
      }),
    },
    responses: {
      200: { description: "The task.", content: a2aJson(TaskSchema) },
      default: A2A_ERROR,
    },
  }, async (c) => {
    const task = await getTask(callOf(c), c.req.valid("param").id, {
      historyLength: historyLengthOf(c.req.valid("query").historyLength),
    });
    return ok(c, task);
  });

  // `:cancel` and `:subscribe` share one Hono route (a path parameter cannot end in a literal):
  // declared for the reference each, served below.
  for (
    const [action, summary, ok] of [
      ["cancel", "Cancel a task", {
        description: "The task after cancelling.",
        content: a2aJson(TaskSchema),
      }],
      ["subscribe", "Stream a working task's updates", {
        description: "The task's updates.",
        content: A2A_STREAM,
      }],
    ] as const
  ) {
    const declaration = {
      method: "post",
      path: `/tasks/{id}:${action}`,
      operationId: `a2a${action[0].toUpperCase()}${action.slice(1)}Task`,
      tags: ["A2A"],
      summary,
      request: {
        params: TASK,
        body: {
          required: false,
          content: { "application/json": { schema: CancelTaskRequestSchema } },
        },
      },
      responses: { 200: ok, default: A2A_ERROR },
    } satisfies RouteConfig;
    if (!tenant) r.openAPIRegistry.registerPath(withTenantPrefix(declaration));
  }
  r.post("/tasks/:id", async (c) => {
    checkServiceParameters(c);
    const ref = c.req.param("id");
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
      const updates = await subscribeTask(callOf(c, tenant), id, taskCursor(c));
      return sseResponse(frames(updates), { keepaliveMs: keepaliveMs(c) });
    }
    if (at < 0) {
      c.header("allow", "GET");
      throw a2aErrors.methodNotAllowed("POST", c.req.path);
    }
    throw a2aErrors.noRoute("POST", c.req.path);
  });

  // Push notifications are not supported (spec §3.3.4: every config operation says so).
  r.all("/tasks/:id/pushNotificationConfigs", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.pushNotSupported();
  });
  r.all("/tasks/:id/pushNotificationConfigs/*", (c) => {
    checkServiceParameters(c);
    throw a2aErrors.pushNotSupported();
  });

  declare({
    method: "get",
    path: "/extendedAgentCard",
    operationId: "a2aExtendedAgentCard",
    tags: ["A2A"],
    summary: "Extended agent card (not supported: always an UnsupportedOperationError)",
    middleware: serviceParameters,
    responses: {
      200: { description: "Never: there is no extended card.", content: A2A_BODY },
      default: A2A_ERROR,
    },
  }, () => {
    throw a2aErrors.unsupported(
      "this agent has no extended agent card (capabilities.extendedAgentCard is false)",
    );
  });

  return r;
}

/**
 * How the reference tells of the `/{tenant}` prefix: in each operation's description rather than
 * as a second path. Documented as paths of their own, `GET <base>/tasks/{id}` and
 * `GET <base>/{tenant}/tasks` would both match `<base>/tasks/tasks` (and a tenant named `tasks`
 * would make every prefixed operation one of `/tasks/{id}`); the router reads such a path
 * without the prefix, as it always did, so existing clients keep working (docs/a2a.md, Tenancy).
 */
const TENANT_PREFIX = "Also served under the tenant prefix, `<base>/{tenant}/...` (what the A2A " +
  "SDK's REST client sends for a tenant), where the path names the tenant; a path whose first " +
  "segment is `tasks` is always read without a prefix (docs/a2a.md, Tenancy).";

/** An operation's documented declaration: its description names the `/{tenant}` prefix. */
function withTenantPrefix<R extends RouteConfig>(declaration: R): R {
  const { description } = declaration;
  return {
    ...declaration,
    description: description ? `${description} ${TENANT_PREFIX}` : TENANT_PREFIX,
  };
}

/** An operation's declaration under the `/{tenant}` prefix (served, not documented). */
function forTenant<R extends RouteConfig>(declaration: R): R {
  const params = declaration.request?.params as z.ZodObject | undefined;
  return {
    ...declaration,
    request: { ...declaration.request, params: z.object({ tenant: TENANT, ...params?.shape }) },
  };
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

/**
 * The ListTasks request of a query string: numbers and booleans parsed (anything else is left as
 * text, for validation to refuse); unknown parameters ignored, as unknown fields are.
 */
function listQuery(query: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of ["tenant", "contextId", "pageToken", "statusTimestampAfter"]) {
    if (query[name] !== undefined) out[name] = query[name];
  }
  for (const name of ["pageSize", "historyLength", "status"]) {
    const value = query[name];
    if (value !== undefined) out[name] = /^-?\d+$/.test(value) ? Number(value) : value;
  }
  const artifacts = query.includeArtifacts;
  if (artifacts !== undefined) {
    out.includeArtifacts = artifacts === "true" ? true : artifacts === "false" ? false : artifacts;
  }
  return out;
}

/** `historyLength` of a task read: a non-negative integer, or unset. */
function historyLengthOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
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

/** An error as the HTTP+JSON body (`application/json`); unexpected ones are logged and hidden. */
export function httpJsonErrorResponse(c: Ctx, err: unknown): Response {
  const error = asA2aError(err, (e) => logUnexpected(c, e));
  return c.json(error.toBody(), error.status as 400);
}

/** SSE frames of the updates: each bare, with its stream cursor as its SSE id. */
async function* frames(updates: AsyncIterable<A2aFrame>): AsyncGenerator<string> {
  for await (const { id, update } of updates) yield sseFrame(update, undefined, id);
}
