/**
 * The JSON-RPC 2.0 binding (spec §9): `POST <base>` (the interface URL the card names) with one
 * request object; the A2A 1.0 method names; results as JSON-RPC responses, the streaming methods
 * as SSE whose every `data:` line is a JSON-RPC response holding one `StreamResponse`. The same
 * operations as the HTTP+JSON binding (./http_json.ts) do the work (./operations.ts, ./send.ts,
 * ./subscribe.ts).
 *
 * Errors are JSON-RPC error objects with the A2A codes (§5.4) and the ErrorInfo details as `data`.
 * Protocol and A2A errors answer HTTP 200 (the envelope carries the error, as `@a2a-js/sdk`'s own
 * server does); errors that are agentd's rather than A2A's keep their HTTP status and use the
 * native code (docs/errors.md) as the application-defined error code; an internal error is
 * `-32603` with 500. Batches are not supported (`-32600`); a notification (no `id`) is executed
 * and answered `204` with no body, as JSON-RPC forbids a reply.
 */
import type { A2aFrame } from "./encoder.ts";
import type { Context } from "hono";
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
import { type A2aCall, callOf, checkVersion, extensionHeader, taskCursor } from "./call.ts";
import { type A2aError, a2aErrors, asA2aError, JSON_RPC } from "./errors.ts";
import { cancelTask, getTask, listTasks } from "./operations.ts";
import {
  CancelTaskRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
} from "./schemas.ts";
import { prepareSend, sendMessage, streamMessage } from "./send.ts";
import { subscribeTask } from "./subscribe.ts";

type Ctx = Context<AppEnv>;

/** A JSON-RPC request id: a string, a number or null (absent: a notification). */
type JsonRpcId = string | number | null;

/** What a method answers: a result, or a stream of results (SSE). */
type Outcome =
  | { result: unknown; headers?: Record<string, string> }
  | { stream: AsyncIterable<A2aFrame>; headers?: Record<string, string> };

/** A method: decodes its params (validated) and runs the operation. */
type Method = (c: Ctx, params: Record<string, unknown>) => Promise<Outcome>;

/** The call of a request: `params.tenant` and `X-Tenant-ID` must agree. */
function call(c: Ctx, tenant: string | null | undefined): A2aCall {
  return callOf(c, [["params.tenant", tenant]]);
}

const pushNotSupported: Method = () => {
  throw a2aErrors.pushNotSupported();
};

/** The methods, by their A2A 1.0 names. */
const METHODS: Record<string, Method> = {
  async SendMessage(c, params) {
    const body = validate(SendMessageRequestSchema, params, "params");
    const who = call(c, body.tenant);
    const prepared = await prepareSend(who, body);
    const task = await sendMessage(who, prepared);
    return { result: { task }, headers: extensionHeader(prepared.activated) };
  },
  async SendStreamingMessage(c, params) {
    const body = validate(SendMessageRequestSchema, params, "params");
    const who = call(c, body.tenant);
    const prepared = await prepareSend(who, body);
    // Started before the response, so a refused request is a JSON error, not a broken stream.
    return {
      stream: await streamMessage(who, prepared),
      headers: extensionHeader(prepared.activated),
    };
  },
  async GetTask(c, params) {
    const request = validate(
      GetTaskRequestSchema,
      jsonNames(params, GetTaskRequestSchema),
      "params",
    );
    const task = await getTask(call(c, request.tenant), request.id, {
      historyLength: request.historyLength,
    });
    return { result: task };
  },
  async ListTasks(c, params) {
    const request = validate(
      ListTasksRequestSchema,
      jsonNames(params, ListTasksRequestSchema),
      "params",
    );
    return { result: await listTasks(call(c, request.tenant), request) };
  },
  async CancelTask(c, params) {
    const request = validate(required(CancelTaskRequestSchema), params, "params");
    return { result: await cancelTask(call(c, request.tenant), request.id) };
  },
  async SubscribeToTask(c, params) {
    const request = validate(SubscribeToTaskRequestSchema, params, "params");
    return { stream: await subscribeTask(call(c, request.tenant), request.id, taskCursor(c)) };
  },
  // Push notifications are not supported (capabilities.pushNotifications is false): every config
  // method says so (spec §3.3.4), under the names of the spec and of the SDK.
  SetTaskPushNotificationConfig: pushNotSupported,
  CreateTaskPushNotificationConfig: pushNotSupported,
  GetTaskPushNotificationConfig: pushNotSupported,
  ListTaskPushNotificationConfig: pushNotSupported,
  ListTaskPushNotificationConfigs: pushNotSupported,
  DeleteTaskPushNotificationConfig: pushNotSupported,
  GetExtendedAgentCard() {
    throw a2aErrors.unsupported(
      "this agent has no extended agent card (capabilities.extendedAgentCard is false)",
    );
  },
};

/**
 * `params` with the proto field names of the schema's top-level fields (`history_length`), which
 * ProtoJSON parsers accept as well as the JSON names and some clients send, renamed to the JSON
 * names (`historyLength`). Both names of one field at once is InvalidParams, as a duplicate field
 * is to a ProtoJSON parser.
 */
function jsonNames(
  params: Record<string, unknown>,
  schema: { shape: Record<string, unknown> },
): Record<string, unknown> {
  const out = { ...params };
  for (const [key, value] of Object.entries(params)) {
    if (!key.includes("_")) continue;
    const name = key.replace(/_([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());
    if (!Object.hasOwn(schema.shape, name)) continue;
    if (Object.hasOwn(params, name)) {
      throw a2aErrors.invalid(`params name the field ${name} twice (as ${key} too)`, [
        { field: `params.${key}`, description: `the proto name of ${name}, which is given too` },
      ]);
    }
    delete out[key];
    out[name] = value;
  }
  return out;
}

/** Methods that take no params (`params` may be omitted). */
const NO_PARAMS = new Set(["GetExtendedAgentCard"]);

/** v0.3 method names, answered with a pointer to their 1.0 names. */
const LEGACY: Record<string, string> = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/list": "ListTasks",
  "tasks/cancel": "CancelTask",
  "tasks/resubscribe": "SubscribeToTask",
  "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
};

/** `CancelTaskRequest` with the id required (the HTTP+JSON binding takes it from the path). */
function required<T extends typeof CancelTaskRequestSchema>(schema: T) {
  return schema.extend({ id: schema.shape.id.unwrap().unwrap().min(1) });
}

/** The JSON-RPC endpoint: `POST <base>`. */
export async function jsonRpcHandler(c: Ctx): Promise<Response> {
  let id: JsonRpcId = null;
  let notification = false;
  try {
    const request = envelopeOf(await readRequest(c));
    id = request.id;
    if (request.invalid) throw a2aErrors.jsonRpc(JSON_RPC.INVALID_REQUEST, request.invalid);
    notification = request.notification;
    checkVersion(c);
    const outcome = await dispatch(c, request.method, request.params);
    if (notification) {
      // No reply to a notification; a stream's run goes on without a reader.
      if ("stream" in outcome) void drain(outcome.stream);
      return c.body(null, 204);
    }
    if ("stream" in outcome) {
      return sseResponse(frames(outcome.stream, id, (e) => logUnexpected(c, e)), {
        keepaliveMs: keepaliveMs(c),
        headers: outcome.headers,
      });
    }
    return c.json({ jsonrpc: "2.0", id, result: outcome.result }, 200, outcome.headers);
  } catch (err) {
    if (notification) return c.body(null, 204);
    return jsonRpcErrorResponse(c, err, id);
  }
}

/**
 * Reads the body as JSON: bad JSON is `-32700`, a media type other than JSON is A2A's
 * ContentTypeNotSupportedError (`-32005`, HTTP 200 like every A2A error here); the size limit is
 * agentd's own (413001).
 */
async function readRequest(c: Ctx): Promise<unknown> {
  try {
    return await readJson(c, bodyLimit(c));
  } catch (err) {
    const known = apiErrorOf(err);
    if (known?.code === 400001) {
      throw a2aErrors.jsonRpc(JSON_RPC.PARSE_ERROR, `parse error: ${known.message}`);
    }
    if (known?.code === 415001) {
      throw a2aErrors.contentType(
        "the JSON-RPC endpoint takes a JSON-RPC request as application/json",
        { contentType: c.req.header("content-type")?.slice(0, 128) ?? "" },
      );
    }
    throw err;
  }
}

/** A decoded request envelope; `invalid` says why it is no JSON-RPC request. */
interface Envelope {
  id: JsonRpcId;
  notification: boolean;
  method: string;
  params: unknown;
  invalid?: string;
}

/**
 * Checks the envelope (JSON-RPC 2.0 §4): anything but one request object (a batch, a scalar, a
 * wrong `jsonrpc`, a missing `method`, an id that is neither string, number nor null) is
 * invalid (`-32600`), answered with the request's id when it has a usable one.
 */
function envelopeOf(body: unknown): Envelope {
  const invalid = (why: string, id: JsonRpcId = null): Envelope => ({
    id,
    notification: false,
    method: "",
    params: undefined,
    invalid: why,
  });
  if (Array.isArray(body)) {
    return invalid("batch requests are not supported: send one request object per HTTP request");
  }
  if (typeof body !== "object" || body === null) {
    return invalid("the request must be a JSON-RPC request object");
  }
  const request = body as Record<string, unknown>;
  const rawId = request.id;
  const idOk = rawId === null || typeof rawId === "string" || typeof rawId === "number";
  const id = idOk ? rawId as JsonRpcId : null;
  if (request.jsonrpc !== "2.0") return invalid(`"jsonrpc" must be "2.0"`, id);
  if (Object.hasOwn(request, "id") && !idOk) {
    return invalid(`"id" must be a string, a number or null`);
  }
  if (typeof request.method !== "string" || request.method === "") {
    return invalid(`"method" must be a non-empty string`, id);
  }
  return {
    id,
    notification: !Object.hasOwn(request, "id"),
    method: request.method,
    params: request.params,
  };
}

/** Finds the method and checks its params are an object (`-32601`, `-32602`). */
function dispatch(c: Ctx, method: string, params: unknown): Promise<Outcome> {
  const run = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!run) {
    const modern = LEGACY[method];
    throw a2aErrors.jsonRpc(
      JSON_RPC.METHOD_NOT_FOUND,
      modern
        ? `method '${method}' is A2A 0.3; this agent speaks A2A 1.0: use '${modern}'`
        : `method '${method}' does not exist`,
      { method },
    );
  }
  if (params === undefined && NO_PARAMS.has(method)) return run(c, {});
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    throw a2aErrors.invalid(
      params === undefined ? `${method} needs params` : `params of ${method} must be an object`,
      [{ field: "params", description: "must be an object (by-name parameters)" }],
    );
  }
  return run(c, params as Record<string, unknown>);
}

/** Logs an error no client caused (a bug), with the request id. */
export function logUnexpected(c: Ctx, err: unknown): void {
  c.get("services")?.log.error("unhandled error", {
    request_id: c.get("requestId"),
    error: (err as Error)?.stack ?? String(err),
  });
}

/** An error as a JSON-RPC error response to request `id` (null when it is not known). */
export function jsonRpcErrorResponse(c: Ctx, err: unknown, id: JsonRpcId = null): Response {
  const error = asA2aError(err, (e) => logUnexpected(c, e));
  return c.json({ jsonrpc: "2.0", id, error: error.toJsonRpc() }, jsonRpcStatus(error) as 200);
}

/**
 * The HTTP status of a JSON-RPC error response: 200 for JSON-RPC's and A2A's errors (negative
 * codes), 500 for an internal error, an agentd error's own status otherwise (401, 413, 503, ...).
 */
function jsonRpcStatus(error: A2aError): number {
  if (error.jsonRpcCode === JSON_RPC.INTERNAL_ERROR) return 500;
  return error.jsonRpcCode < 0 ? 200 : error.status;
}

/**
 * SSE frames: each a JSON-RPC response with one `StreamResponse` (and the frame's stream cursor as
 * its SSE id); a failure ends with an error.
 */
async function* frames(
  updates: AsyncIterable<A2aFrame>,
  id: JsonRpcId,
  log?: (err: unknown) => void,
): AsyncGenerator<string> {
  try {
    for await (const frame of updates) {
      yield sseFrame({ jsonrpc: "2.0", id, result: frame.update }, undefined, frame.id);
    }
  } catch (err) {
    // Frames already went out: the error is the stream's last frame (logged once, as a bug is).
    const error = asA2aError(err, (e) => log?.(e));
    yield sseFrame({ jsonrpc: "2.0", id, error: error.toJsonRpc() });
  }
}

async function drain(updates: AsyncIterable<A2aFrame>): Promise<void> {
  try {
    for await (const _ of updates) { /* nobody reads a notification's stream */ }
  } catch { /* nor its errors */ }
}

/** The method names served (for the API reference). */
export const JSON_RPC_METHODS: readonly string[] = Object.keys(METHODS);
