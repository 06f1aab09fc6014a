/**
 * Errors at the HTTP edge: every error a route lets escape becomes the spec's error body here. An
 * `ApiError` answers as itself; the domain layers' errors — the store's, the engine's, the model
 * resolution's, the run service's, an unavailable pub/sub — answer as the code docs/errors.md
 * gives their kind; anything else is a bug: logged with the request id and answered 500000.
 */
import { HTTPException } from "hono/http-exception";
import { ApiError, errors, type FieldError } from "../../errors.ts";
import { EngineError, type EngineErrorKind } from "../../engine/mod.ts";
import { ModelConfigError } from "../../models/mod.ts";
import { PubSubUnavailable } from "../../pubsub/mod.ts";
import { RunServiceError, type RunServiceErrorKind } from "../../runs/errors.ts";
import { StoreError, type StoreErrorKind, StoreUnavailable } from "../../store/mod.ts";
import type { Ctx } from "./env.ts";

const STORE_ERRORS: Record<StoreErrorKind, (id: string) => ApiError> = {
  session_not_found: errors.sessionNotFound,
  run_not_found: errors.runNotFound,
  checkpoint_not_found: errors.checkpointNotFound,
  session_exists: errors.sessionExists,
  run_exists: errors.runExists,
  message_exists: errors.messageExists,
  session_busy: errors.sessionBusy,
  invalid_cursor: () =>
    errors.validation([{
      field: "page",
      errors: [{ code: "cursor", message: "not a cursor returned as next_page by this list" }],
    }]),
};

const ENGINE_ERRORS: Record<EngineErrorKind, (err: EngineError) => ApiError> = {
  invalid_request: (err) => errors.validation(err.fields),
  checkpoint_not_found: (err) => errors.checkpointNotFound(err.id),
  message_exists: (err) => errors.messageExists(err.id),
  too_large: (err) => errors.tooLarge(err.message),
  message_too_large: (err) => errors.messageTooLarge(err.message),
};

const RUN_SERVICE_ERRORS: Record<RunServiceErrorKind, (err: RunServiceError) => ApiError> = {
  shutting_down: () => errors.shuttingDown(),
  at_capacity: (err) => errors.atCapacity(err.detail),
  tenant_limit: (err) => errors.tenantLimit(err.message),
  session_busy: (err) => errors.sessionBusy(err.id),
  run_not_found: (err) => errors.runNotFound(err.id),
  run_not_running: (err) => errors.runNotRunning(err.id, err.detail),
  events_gone: (err) => errors.eventsGone(err.id, err.detail),
};

/**
 * The `ApiError` a thrown error answers as, or undefined when it is no client's doing: a store
 * or a pub/sub that cannot be reached is 503001 (the app adds `Retry-After`), never a 500.
 */
export function apiErrorOf(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError) return STORE_ERRORS[err.kind](err.id);
  if (err instanceof EngineError) return ENGINE_ERRORS[err.kind](err);
  if (err instanceof ModelConfigError) return errors.validation(err.fields);
  if (err instanceof RunServiceError) return RUN_SERVICE_ERRORS[err.kind](err);
  if (err instanceof StoreUnavailable) return errors.unavailable("the store");
  if (err instanceof PubSubUnavailable) return errors.unavailable(err.what);
  return undefined;
}

/** A field error with one code (what an add-on's request mapping reports). */
export function fieldError(
  field: string,
  code: string,
  message: string,
  params?: Record<string, unknown>,
): FieldError {
  return { field, errors: [{ code, message, ...(params ? { params } : {}) }] };
}

/**
 * Re-labels an error the API answers as a validation error (the run service's, the engine's) with
 * an add-on request's field names (`field` renames a native one); any other error is returned as
 * it is.
 */
export function relabelFields(err: unknown, field: (native: string) => string): unknown {
  const fields = apiErrorOf(err)?.fields;
  if (!fields) return err;
  return errors.validation(fields.map((f) => ({ ...f, field: field(f.field) })));
}

/** The app's error handler: the error's body, or a logged 500000 for an unexpected error. */
export function errorResponse(c: Ctx, err: unknown): Response {
  if (err instanceof StoreUnavailable) {
    c.get("services")?.log.warn("store unavailable", {
      request_id: c.get("requestId"),
      error: err.message,
    });
  }
  const known = apiErrorOf(err) ?? libraryError(c, err);
  if (known) return c.json(known.toBody(), known.status as 400);
  c.get("services")?.log.error("unhandled error", {
    request_id: c.get("requestId"),
    error: (err as Error)?.stack ?? String(err),
  });
  const internal = errors.internal();
  return c.json(internal.toBody(), 500);
}

/**
 * A body or media type the route libraries refused before our readers saw it (Hono's validator,
 * the declared media types of `@hono/zod-openapi`), in our codes.
 */
function libraryError(c: Ctx, err: unknown): ApiError | undefined {
  if (!(err instanceof HTTPException)) return undefined;
  if (err.status === 415) return errors.unsupportedMediaType(c.req.header("content-type") ?? null);
  if (err.status === 400) return errors.malformedJson(err.message);
  return undefined;
}
