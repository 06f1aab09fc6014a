/**
 * The one error type of the service. Every failure a client can see is an `ApiError` carrying its
 * HTTP status and numeric code (`status * 1000 + sub`, see docs/errors.md); the HTTP error
 * middleware turns it into the spec's generic or validation error body.
 */

/** One failing rule of one field (spec: validation error `fields[].errors[]`). */
export interface FieldRuleError {
  code: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** One failing field with its rules. */
export interface FieldError {
  field: string;
  errors: FieldRuleError[];
}

/** An error with an HTTP status and a stable numeric code. */
export class ApiError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** `status * 1000 + sub`. */
  readonly code: number;
  /** Present for validation errors (422). */
  readonly fields?: FieldError[];

  /** An error of `status` with code `status * 1000 + sub` (and `fields` for a 422). */
  constructor(status: number, sub: number, message: string, fields?: FieldError[]) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = status * 1000 + sub;
    this.fields = fields;
  }

  /** The JSON body of the spec: generic `{code, message}` or validation `{code, fields}`. */
  toBody(): Record<string, unknown> {
    return this.fields ? { code: this.code, fields: this.fields } : {
      code: this.code,
      message: this.message,
    };
  }
}

/** Constructors for every error the service returns; the sub-index table of docs/errors.md. */
export const errors = {
  malformedJson: (detail: string) => new ApiError(400, 1, `malformed JSON body: ${detail}`),
  badTenant: (why: string) => new ApiError(400, 2, `invalid X-Tenant-ID header: ${why}`),
  badRequest: (message: string) => new ApiError(400, 3, message),
  malformedHttp: (why = "invalid request line or header bytes") =>
    new ApiError(400, 4, `malformed HTTP request (${why})`),
  unauthorized: () => new ApiError(401, 1, "missing or invalid API key"),
  tenantForbidden: () =>
    new ApiError(403, 1, "the API key is bound to another tenant than X-Tenant-ID names"),
  sessionNotFound: (id: string) => new ApiError(404, 1, `session '${id}' not found`),
  runNotFound: (id: string) => new ApiError(404, 2, `run '${id}' not found`),
  messageNotFound: (id: string) => new ApiError(404, 3, `message '${id}' not found`),
  checkpointNotFound: (id: string) => new ApiError(404, 4, `checkpoint '${id}' not found`),
  routeNotFound: (method: string, path: string) =>
    new ApiError(404, 5, `no route for ${method} ${path}`),
  methodNotAllowed: (method: string, path: string) =>
    new ApiError(405, 1, `method ${method} is not allowed on ${path}`),
  requestTimeout: () =>
    new ApiError(408, 1, "the request was not received in time (header or request timeout)"),
  sessionExists: (id: string) => new ApiError(409, 1, `session '${id}' already exists`),
  runExists: (id: string) => new ApiError(409, 2, `run '${id}' already exists`),
  sessionBusy: (id: string) =>
    new ApiError(409, 3, `session '${id}' already has a running run; one run at a time`),
  runNotRunning: (id: string, status: string) =>
    new ApiError(409, 4, `run '${id}' is ${status}, not running`),
  messageExists: (id: string) => new ApiError(409, 5, `message '${id}' already exists`),
  eventsGone: (id: string, why: string) =>
    new ApiError(
      410,
      1,
      `the events of run '${id}' after this cursor are not retained (${why}); ` +
        `read the run and its session's messages instead`,
    ),
  bodyTooLarge: (limit: number) =>
    new ApiError(413, 1, `request body is larger than the limit of ${limit} bytes`),
  tooLarge: (message: string) => new ApiError(413, 2, message),
  messageTooLarge: (message: string) => new ApiError(413, 3, message),
  unsupportedMediaType: (got: string | null) =>
    new ApiError(
      415,
      1,
      `content type must be application/json${got ? `, got '${got}'` : " (none given)"}`,
    ),
  validation: (fields: FieldError[]) => new ApiError(422, 0, "validation failed", fields),
  tenantLimit: (message: string) => new ApiError(429, 1, `${message}; retry later`),
  headersTooLarge: () =>
    new ApiError(431, 1, "the request line and headers are larger than 16 KiB"),
  /** Never delivered (the client is gone): the status logs and metrics record for a hang-up. */
  clientClosed: () => new ApiError(499, 1, "the client closed the connection mid-request"),
  internal: () => new ApiError(500, 0, "internal error"),
  unavailable: (what: string) => new ApiError(503, 1, `${what} is unavailable`),
  shuttingDown: () => new ApiError(503, 2, "the server is shutting down and accepts no new runs"),
  tooManyConnections: () =>
    new ApiError(503, 3, "too many open connections (http_server.max_connections); retry later"),
  atCapacity: (detail?: string) =>
    new ApiError(
      503,
      4,
      detail ||
        "this replica runs as many runs as it may (runtime.runs.max_concurrent); retry later, " +
          "or start the run detached to queue it",
    ),
} as const;
