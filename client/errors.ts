/**
 * The client's errors: every error answer of the server (docs/errors.md) as an `AgentdError`
 * carrying its numeric `code` (`status * 1000 + sub`), and the codes by name.
 */
import type { FieldError } from "./types.ts";

/** The server's error codes by name (docs/errors.md; the names of `src/errors.ts`). */
export const ERROR_CODES = {
  malformedJson: 400001,
  badTenant: 400002,
  badRequest: 400003,
  malformedHttp: 400004,
  unauthorized: 401001,
  tenantForbidden: 403001,
  sessionNotFound: 404001,
  runNotFound: 404002,
  messageNotFound: 404003,
  checkpointNotFound: 404004,
  routeNotFound: 404005,
  methodNotAllowed: 405001,
  requestTimeout: 408001,
  sessionExists: 409001,
  runExists: 409002,
  sessionBusy: 409003,
  runNotRunning: 409004,
  messageExists: 409005,
  eventsGone: 410001,
  bodyTooLarge: 413001,
  tooLarge: 413002,
  messageTooLarge: 413003,
  unsupportedMediaType: 415001,
  validation: 422000,
  tenantLimit: 429001,
  headersTooLarge: 431001,
  clientClosed: 499001,
  internal: 500000,
  unavailable: 503001,
  shuttingDown: 503002,
  tooManyConnections: 503003,
  atCapacity: 503004,
} as const;

/** A code of `ERROR_CODES`. */
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** An error answer of the server. */
export class AgentdError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** `status * 1000 + sub` (docs/errors.md); a code of `ERROR_CODES` from this server. */
  readonly code: ErrorCode;
  /** A validation error's (422000) failing fields. */
  readonly fields?: FieldError[];
  /** The request's id (`x-request-id`), as every log line of the request has it. */
  readonly requestId?: string;

  /** An error of `status` with the body's `code`, message and fields. */
  constructor(
    status: number,
    body: { code: number; message?: string; fields?: FieldError[] },
    requestId?: string,
  ) {
    super(body.message ?? (body.fields ? "validation failed" : `HTTP ${status}`));
    this.name = "AgentdError";
    this.status = status;
    this.code = body.code as ErrorCode;
    this.fields = body.fields;
    this.requestId = requestId;
  }
}

/**
 * The `AgentdError` of an error response: its JSON body, or, when an intermediary answered
 * something else, the status as the code (`status * 1000`).
 */
export async function errorOf(res: Response): Promise<AgentdError> {
  const text = await res.text().catch(() => "");
  let body: { code: number; message?: string; fields?: FieldError[] };
  try {
    const json = JSON.parse(text);
    body = typeof json?.code === "number"
      ? json
      : { code: res.status * 1000, message: text.slice(0, 500) };
  } catch {
    body = { code: res.status * 1000, message: text.slice(0, 500) || `HTTP ${res.status}` };
  }
  return new AgentdError(res.status, body, res.headers.get("x-request-id") ?? undefined);
}
