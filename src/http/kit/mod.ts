/**
 * The HTTP kit: what every route module shares, the native `/v1` routes and the protocol add-ons
 * alike — the app's environment types, route declarations (served, validated and documented from
 * one `createRoute`), the add-on seam, SSE responses, request validation, the `http_server`
 * settings routes read, API key helpers and the error → response mapping. A leaf:
 * it imports no route module, no add-on and nothing else of src/http.
 *
 * @module
 */
export type { AddOn } from "./addon.ts";
export type { AppEnv, AppServices, Ctx, McpToolView } from "./env.ts";
export {
  dropSse,
  isSse,
  nonEmpty,
  onSseClose,
  sseComment,
  sseFrame,
  sseHeldBytes,
  sseJsonFrame,
  type SseOptions,
  type SsePiece,
  sseResponse,
  sseSharedFrame,
} from "./sse.ts";
export {
  type Cursor,
  frameId,
  isAfter,
  parseCursor,
  requestCursor,
  streamAfter,
} from "./cursor.ts";
export {
  fieldErrors,
  parseInput,
  queryParam,
  readJson,
  type ReadJsonOptions,
  validate,
  withoutEmptyValues,
} from "./validation.ts";
export { bodyLimit, keepaliveMs, maxBodyBytes } from "./settings.ts";
export {
  apiKeyAuth,
  type ApiKeyIdentity,
  assertTenantAllowed,
  authEnabled,
  authScheme,
  isPublic,
  publicPaths,
} from "./auth.ts";
export { apiErrorOf, errorResponse, fieldError, relabelFields } from "./errors.ts";
export type { ApiError } from "../../errors.ts";
export { markTimedOut } from "./wire.ts";
export {
  BODY_ERRORS,
  jsonBody,
  route,
  type RouteContext,
  type RouteOptions,
  type Routes,
  routes,
  validationError,
  validationHook,
} from "./routes.ts";
