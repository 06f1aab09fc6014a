/**
 * The OpenTelemetry API, loaded only when Deno's OpenTelemetry is on (`OTEL_DENO=true`): Deno then
 * registers its tracer provider and context manager under the API's global before any module
 * runs. Without it nothing in this process registers a provider (agentd loads no SDK), every span
 * would be a no-op and no context would be kept, so the API (~50 modules, ~8 ms of a cold start)
 * is not loaded at all and `otel` is undefined.
 */
import type * as OtelApi from "@opentelemetry/api";

/** The global the API's 1.x versions share (`@opentelemetry/api`'s `internal/global-utils`). */
const API_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/** The API when Deno's OpenTelemetry is on; undefined when it is off. */
export const otel: typeof OtelApi | undefined = API_GLOBAL in globalThis
  ? await import("@opentelemetry/api")
  : undefined;

/** `SpanStatusCode.ERROR`, without loading the API for the enum. */
export const SPAN_STATUS_ERROR = 2 as OtelApi.SpanStatusCode.ERROR;
