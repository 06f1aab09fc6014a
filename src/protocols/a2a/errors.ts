/**
 * A2A errors, one value rendered by either binding:
 *
 * - HTTP+JSON (spec §11.6): a `google.rpc.Status` JSON body `{"error": {code, status, message,
 *   details}}` whose `details` carry a `google.rpc.ErrorInfo` (`reason` in the `a2a-protocol.org`
 *   domain) for A2A-specific errors, so clients tell apart errors that share an HTTP status;
 * - JSON-RPC (spec §9.5): `{code, message, data}` with the A2A code of the reason (§5.4) and the
 *   same `details` as `data` (what `@a2a-js/sdk`'s own server sends).
 *
 * Native `ApiError`s raised by shared code are re-shaped here too (ErrorInfo domain `agentd`, the
 * native numeric code in its metadata and, on JSON-RPC, as the application-defined error code), so
 * every error of the add-on has one shape per binding.
 */
import { type ApiError, errors, type FieldError } from "../../errors.ts";
import { apiErrorOf } from "../../http/kit/mod.ts";

/** ErrorInfo `@type`. */
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
/** `@type` of the field violations we attach to malformed requests. */
export const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";
/** ErrorInfo domain of A2A-specific errors. */
export const A2A_ERROR_DOMAIN = "a2a-protocol.org";
/** ErrorInfo domain of errors that are ours rather than A2A's. */
export const AGENTD_ERROR_DOMAIN = "agentd";

/** A2A error reasons we answer with (spec §3.3.2; `INVALID_PARAMS` as the SDK names it). */
export type A2aReason =
  | "TASK_NOT_FOUND"
  | "TASK_NOT_CANCELABLE"
  | "PUSH_NOTIFICATION_NOT_SUPPORTED"
  | "UNSUPPORTED_OPERATION"
  | "CONTENT_TYPE_NOT_SUPPORTED"
  | "EXTENSION_SUPPORT_REQUIRED"
  | "VERSION_NOT_SUPPORTED"
  | "INVALID_PARAMS";

/** JSON-RPC 2.0's own error codes (§5.1 of JSON-RPC; spec §9.5). */
export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/**
 * HTTP status, `google.rpc.Code` name and JSON-RPC code of each reason (spec §5.4). Where A2A
 * 1.0.0 and 1.0.1 differ (TaskNotCancelable 409 → 400, ContentTypeNotSupported 415 → 400) we
 * answer 1.0.1's 400, as `@a2a-js/sdk` 1.3.0 does; the JSON-RPC codes are the same in both.
 */
const REASONS: Record<A2aReason, { http: number; status: string; jsonRpc: number }> = {
  TASK_NOT_FOUND: { http: 404, status: "NOT_FOUND", jsonRpc: -32001 },
  TASK_NOT_CANCELABLE: { http: 400, status: "FAILED_PRECONDITION", jsonRpc: -32002 },
  PUSH_NOTIFICATION_NOT_SUPPORTED: { http: 400, status: "FAILED_PRECONDITION", jsonRpc: -32003 },
  UNSUPPORTED_OPERATION: { http: 400, status: "FAILED_PRECONDITION", jsonRpc: -32004 },
  CONTENT_TYPE_NOT_SUPPORTED: { http: 400, status: "INVALID_ARGUMENT", jsonRpc: -32005 },
  EXTENSION_SUPPORT_REQUIRED: { http: 400, status: "FAILED_PRECONDITION", jsonRpc: -32008 },
  VERSION_NOT_SUPPORTED: { http: 400, status: "FAILED_PRECONDITION", jsonRpc: -32009 },
  INVALID_PARAMS: { http: 400, status: "INVALID_ARGUMENT", jsonRpc: JSON_RPC.INVALID_PARAMS },
};

/** One `details` entry (ProtoJSON `Any`). */
export type ErrorDetail = { "@type": string } & Record<string, unknown>;

/** A JSON-RPC error object. */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** An error of the A2A add-on, rendered as a `google.rpc.Status` body or a JSON-RPC error. */
export class A2aError extends Error {
  /** HTTP status (HTTP+JSON binding). */
  readonly status: number;
  /** `google.rpc.Code` name (`NOT_FOUND`, `FAILED_PRECONDITION`, ...). */
  readonly rpcStatus: string;
  /** `details` of the body (`data` on JSON-RPC). */
  readonly details: ErrorDetail[];
  /** The JSON-RPC error code (JSON-RPC binding). */
  readonly jsonRpcCode: number;

  constructor(
    status: number,
    rpcStatus: string,
    message: string,
    details: ErrorDetail[],
    jsonRpcCode: number,
  ) {
    super(message);
    this.name = "A2aError";
    this.status = status;
    this.rpcStatus = rpcStatus;
    this.details = details;
    this.jsonRpcCode = jsonRpcCode;
  }

  /** An A2A-specific error: ErrorInfo in the A2A domain; metadata values become strings. */
  static of(
    reason: A2aReason,
    message: string,
    metadata: Record<string, unknown> = {},
    extra: ErrorDetail[] = [],
  ): A2aError {
    const { http, status, jsonRpc } = REASONS[reason];
    return new A2aError(http, status, message, [
      errorInfo(reason, A2A_ERROR_DOMAIN, metadata),
      ...extra,
    ], jsonRpc);
  }

  /** The `ErrorInfo.reason`, when the error has one. */
  get reason(): string | undefined {
    const info = this.details.find((d) => d["@type"] === ERROR_INFO_TYPE);
    return info?.reason as string | undefined;
  }

  /** The JSON-RPC error object: the A2A code, the message, the details as `data`. */
  toJsonRpc(): JsonRpcError {
    return { code: this.jsonRpcCode, message: this.message, data: this.details };
  }

  /** The HTTP+JSON body. */
  toBody(): { error: { code: number; status: string; message: string; details: ErrorDetail[] } } {
    return {
      error: {
        code: this.status,
        status: this.rpcStatus,
        message: this.message,
        details: this.details,
      },
    };
  }
}

/** A `google.rpc.ErrorInfo` detail; its metadata is a string map by definition. */
function errorInfo(reason: string, domain: string, metadata: Record<string, unknown>): ErrorDetail {
  const strings: Record<string, string> = { timestamp: new Date().toISOString() };
  for (const [key, value] of Object.entries(metadata)) {
    if (value === undefined) continue;
    strings[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return { "@type": ERROR_INFO_TYPE, reason, domain, metadata: strings };
}

/** Constructors of the errors the add-on answers with. */
export const a2aErrors = {
  taskNotFound: (taskId: string) =>
    A2aError.of("TASK_NOT_FOUND", `task '${taskId}' does not exist or is not accessible`, {
      taskId,
    }),
  /** A run that continues a task: a turn of it, not a task of its own. */
  taskNotFoundAsTurn: (runId: string, taskId: string) =>
    A2aError.of(
      "TASK_NOT_FOUND",
      `'${runId}' is no task: it is a turn (a run) of task '${taskId}'; use that task's id`,
      { taskId: runId, continues: taskId },
    ),
  taskNotCancelable: (taskId: string, state: string) =>
    A2aError.of("TASK_NOT_CANCELABLE", `task '${taskId}' is ${state} and cannot be canceled`, {
      taskId,
      state,
    }),
  pushNotSupported: () =>
    A2aError.of(
      "PUSH_NOTIFICATION_NOT_SUPPORTED",
      "push notifications are not supported by this agent (capabilities.pushNotifications is false)",
    ),
  unsupported: (message: string, metadata: Record<string, unknown> = {}) =>
    A2aError.of("UNSUPPORTED_OPERATION", message, metadata),
  contentType: (message: string, metadata: Record<string, unknown> = {}) =>
    A2aError.of("CONTENT_TYPE_NOT_SUPPORTED", message, metadata),
  version: (requested: string, supported: string) =>
    A2aError.of(
      "VERSION_NOT_SUPPORTED",
      `A2A version '${requested}' is not supported; this interface speaks ${supported}`,
      { requested, supported },
    ),
  /** A malformed request; `fields` become `google.rpc.BadRequest` field violations. */
  invalid: (message: string, fields: { field: string; description: string }[] = []) =>
    A2aError.of(
      "INVALID_PARAMS",
      message,
      {},
      fields.length > 0 ? [{ "@type": BAD_REQUEST_TYPE, fieldViolations: fields }] : [],
    ),
  /** A required extension of the card the request does not activate. */
  extensionRequired: (missing: readonly string[]) =>
    A2aError.of(
      "EXTENSION_SUPPORT_REQUIRED",
      `this agent requires the extension${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; ` +
        `activate ${missing.length > 1 ? "them" : "it"} with the A2A-Extensions header`,
      { extensions: missing.join(",") },
    ),
  /** A path under the base that is no A2A operation. */
  noRoute: (method: string, path: string) =>
    new A2aError(404, "NOT_FOUND", `no A2A operation at ${method} ${path}`, [
      errorInfo("NO_ROUTE", AGENTD_ERROR_DOMAIN, { method, path }),
    ], JSON_RPC.METHOD_NOT_FOUND),
  /** An A2A operation path with another method than the one it serves. */
  methodNotAllowed: (method: string, path: string) =>
    new A2aError(405, "UNIMPLEMENTED", `method ${method} is not allowed on ${path}`, [
      errorInfo("METHOD_NOT_ALLOWED", AGENTD_ERROR_DOMAIN, { method, path }),
    ], JSON_RPC.METHOD_NOT_FOUND),
  /** A JSON-RPC envelope error (parse error, invalid request, unknown method). */
  jsonRpc: (code: number, message: string, metadata: Record<string, unknown> = {}) =>
    new A2aError(400, "INVALID_ARGUMENT", message, [
      errorInfo(JSON_RPC_REASONS[code] ?? "INVALID_REQUEST", AGENTD_ERROR_DOMAIN, metadata),
    ], code),
} as const;

/** ErrorInfo reasons of JSON-RPC's own errors (domain `agentd`: A2A names none). */
const JSON_RPC_REASONS: Record<number, string> = {
  [JSON_RPC.PARSE_ERROR]: "PARSE_ERROR",
  [JSON_RPC.INVALID_REQUEST]: "INVALID_REQUEST",
  [JSON_RPC.METHOD_NOT_FOUND]: "METHOD_NOT_FOUND",
};

/** Field violations of a native validation error, one per failing rule. */
export function fieldViolations(fields: FieldError[]): { field: string; description: string }[] {
  return fields.flatMap((f) =>
    f.errors.map((e) => ({ field: f.field, description: e.message ?? e.code }))
  );
}

/** `google.rpc.Code` names for the HTTP statuses native errors use. */
function rpcStatusOf(err: ApiError): string {
  if (err.code === 409001 || err.code === 409002 || err.code === 409005) return "ALREADY_EXISTS";
  switch (err.status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return "INVALID_ARGUMENT";
    case 401:
      return "UNAUTHENTICATED";
    case 403:
      return "PERMISSION_DENIED";
    case 404:
      return "NOT_FOUND";
    case 409:
      return "ABORTED";
    case 503:
      return "UNAVAILABLE";
    default:
      return err.status >= 500 ? "INTERNAL" : "UNKNOWN";
  }
}

/**
 * A native error in the A2A body shape. A validation error (422 natively) or a malformed body
 * (400001, 400003) is a malformed A2A request: 400 `INVALID_PARAMS`, with the field violations. Others keep their HTTP status and carry
 * the native code in an `agentd` ErrorInfo, whose reason never collides with an A2A one.
 */
export function fromApiError(err: ApiError): A2aError {
  if (err.code === 400001 || err.code === 400003) {
    return A2aError.of("INVALID_PARAMS", err.message, { code: String(err.code) });
  }
  if (err.fields) {
    const violations = fieldViolations(err.fields);
    const summary = violations.map((v) => `${v.field}: ${v.description}`).join("; ");
    return A2aError.of(
      "INVALID_PARAMS",
      `invalid request: ${summary}`,
      { code: String(err.code) },
      [
        { "@type": BAD_REQUEST_TYPE, fieldViolations: violations },
      ],
    );
  }
  // On JSON-RPC the native code is the (application-defined) error code; an internal error is
  // JSON-RPC's own.
  const jsonRpc = err.status === 500 ? JSON_RPC.INTERNAL_ERROR : err.code;
  return new A2aError(err.status, rpcStatusOf(err), err.message, [
    errorInfo(`AGENTD_${err.code}`, AGENTD_ERROR_DOMAIN, { code: String(err.code) }),
  ], jsonRpc);
}

/**
 * Any thrown error as an A2A error: itself, a native error re-shaped, or — for anything else, a
 * bug — an internal error, after `unexpected` has logged it (its details never reach a client).
 */
export function asA2aError(err: unknown, unexpected: (err: unknown) => void): A2aError {
  if (err instanceof A2aError) return err;
  const known = apiErrorOf(err);
  if (known) return fromApiError(known);
  unexpected(err);
  return fromApiError(errors.internal());
}
