/**
 * The error examples of the API reference: one body per error code from the real constructors
 * (docs/errors.md), and each operation's 422 from its own declaration — the answer the server
 * gives to a request that leaves out a required field, or names one it does not know — so an
 * example never shows a field its operation does not have.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Manifest } from "../../config/schema.ts";
import { type ApiError, errors } from "../../errors.ts";
import { maxBodyBytes, validationError } from "../kit/mod.ts";

/** One example error per code, from the real constructors (docs/errors.md). */
export function errorExamples(manifest: Manifest): Map<number, ApiError> {
  const list = [
    errors.malformedJson("Unexpected end of JSON input"),
    errors.badTenant("it may hold only letters, digits, '.', '_', ':' and '-'"),
    errors.unauthorized(),
    errors.tenantForbidden(),
    errors.sessionNotFound("s1"),
    errors.runNotFound("r1"),
    errors.messageNotFound("m1"),
    errors.checkpointNotFound("c1"),
    errors.sessionExists("s1"),
    errors.runExists("r1"),
    errors.sessionBusy("s1"),
    errors.runNotRunning("r1", "completed"),
    errors.messageExists("m1"),
    errors.eventsGone("r1", "the run ended longer ago than the retention window"),
    errors.bodyTooLarge(maxBodyBytes(manifest)),
    errors.tooLarge(
      "the session's conversation would pass 67108864 bytes as JSON (runtime.max_session_bytes); " +
        "start a new session or delete messages",
    ),
    errors.messageTooLarge(
      "message 0 is 2000000 bytes as JSON, over the limit of 1048576 (runtime.max_message_bytes)",
    ),
    errors.unsupportedMediaType("text/plain"),
    errors.tenantLimit(
      "tenant 'acme' has 100 unfinished runs, its limit (runtime.runs.tenant_max_runs)",
    ),
    // An operation without a declaration to ask (see `validationExample`) shows this one.
    errors.validation([{
      field: "body",
      errors: [{ code: "type", message: "must be an object", params: { expected: "object" } }],
    }]),
    errors.internal(),
    errors.unavailable("the store"),
    errors.shuttingDown(),
    errors.tooManyConnections(),
    errors.atCapacity(),
  ];
  return new Map(list.map((e) => [e.code, e]));
}

/**
 * The 422 an operation answers, as its declaration validates: a JSON body without its required
 * fields (`{}`) or with an unknown one, else a query string with an unknown parameter, else a path
 * parameter that is not an id. Undefined when the declaration refuses none of these.
 */
export function validationExample(route: RouteConfig): ApiError | undefined {
  const tries: [string, unknown][] = [
    ["json", {}],
    ["json", { extra: true }],
    ["query", { extra: "1" }],
    ["param", Object.fromEntries(pathParameters(route.path).map((p) => [p, "not/an id"]))],
  ];
  for (const [target, input] of tries) {
    const error = validationError(route, target, input);
    if (error) return error;
  }
  return undefined;
}

/** The names of a path template's parameters: `/v1/runs/{run_id}` -> `run_id`. */
function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
}
