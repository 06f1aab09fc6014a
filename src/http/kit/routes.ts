/**
 * Routes declared once (`@hono/zod-openapi`): each route is a `createRoute` declaration — method,
 * path, parameters, body and responses as zod schemas — that both serves the route (its request
 * is validated against the declaration) and documents it (the app's OpenAPI document is generated
 * from the declarations). Validation failures become the spec's 422 body through one hook; a
 * route's own error codes are listed in its `x-errors` (docs/errors.md), which the document turns
 * into error responses with examples.
 */
import { type Hook, OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { type ApiError, errors } from "../../errors.ts";
import type { AppEnv } from "./env.ts";
import { bodyLimit } from "./settings.ts";
import {
  cacheBodyText,
  fieldErrors,
  parseInput,
  readJson,
  withoutEmptyValues,
} from "./validation.ts";

/** Error codes of every route that reads a JSON body (docs/errors.md). */
export const BODY_ERRORS = [400001, 413001, 415001, 422000] as const;

/** Declared routes: a Hono app whose routes also make the OpenAPI document. */
export type Routes = OpenAPIHono<AppEnv>;

/** What a declared route's handler gets: the context, with the request typed by the declaration. */
export type RouteContext<R extends RouteConfig> = Parameters<RouteHandler<R, AppEnv>>[0];

/** The declared schema of one part of a request (`json`, `query`, `param`, `header`). */
function declared(declaration: RouteConfig, target: string): z.ZodType | undefined {
  const request = declaration.request;
  const schema = target === "json"
    ? (request?.body?.content["application/json"] as { schema?: unknown } | undefined)?.schema
    : target === "query"
    ? request?.query
    : target === "param"
    ? request?.params
    : target === "header"
    ? request?.headers
    : undefined;
  return schema && typeof schema === "object" && "_zod" in schema ? schema as z.ZodType : undefined;
}

/**
 * The spec's 422 (docs/errors.md) for an input of one part of a request (`json`, `query`,
 * `param`, `header`) that does not match its declaration, or null when it does. The failing part
 * is checked again for reporting (`parseInput`), which tells a missing field (`required`) from a
 * wrong one; in a query string, unknown parameters are reported alone. The hook of every declared
 * route, and the 422 example of each operation in the API reference.
 */
export function validationError(
  declaration: RouteConfig,
  target: string,
  input: unknown,
  issues?: readonly z.core.$ZodIssue[],
): ApiError | null {
  const schema = declared(declaration, target);
  if (!schema) return null;
  const parsed = parseInput(schema, input);
  if (parsed.success && !issues) return null;
  let found = parsed.error?.issues ?? issues ?? [];
  const unknown = found.filter((issue) => issue.code === "unrecognized_keys");
  if (target === "query" && unknown.length > 0) found = unknown;
  return errors.validation(fieldErrors(schema, found));
}

/** The validation hook of a declaration: a request that does not match it is our 422. */
export function validationHook(declaration: RouteConfig): Hook<unknown, AppEnv, string, void> {
  return (result) => {
    if (result.success) return;
    const input = (result as unknown as { data: unknown }).data;
    // The hook runs for the parts the declaration validates, each with a zod schema.
    throw validationError(declaration, result.target, input, result.error.issues)!;
  };
}

/**
 * The declaration as served: its query string read without empty values (`withoutEmptyValues`,
 * the one rule of every route), its OpenAPI description unchanged.
 */
function served<R extends RouteConfig>(declaration: R): R {
  const query = declaration.request?.query;
  if (!query) return declaration;
  return {
    ...declaration,
    request: { ...declaration.request, query: z.preprocess(withoutEmptyValues, query) },
  };
}

/** A new set of declared routes (declare each with `route`). */
export function routes(): Routes {
  return new OpenAPIHono<AppEnv>();
}

/** Options of `route`. */
export interface RouteOptions {
  /**
   * Whether the API reference lists the route (default true). An alias another declaration
   * documents (A2A's `/{tenant}` prefix) is served without being listed a second time.
   */
  documented?: boolean;
}

/**
 * Declares a route on `app`: served there, validated against the declaration (with our 422), and
 * documented from it. The handler answers any `Response` (SSE streams, empty 204s, A2A media
 * types).
 */
export function route<R extends RouteConfig>(
  app: Routes,
  declaration: R,
  handler: (c: RouteContext<R>) => Response | Promise<Response>,
  options: RouteOptions = {},
): void {
  // Documented as declared, served as `served` says (the library would document what it serves).
  const { middleware: _, ...documented } = declaration;
  if (options.documented !== false) app.openAPIRegistry.registerPath(documented);
  const serving = served(declaration);
  app.openapi(
    { ...serving, hide: true },
    handler as unknown as RouteHandler<R, AppEnv>,
    validationHook(serving) as never,
  );
}

/**
 * Route middleware that reads a JSON body before the declaration's validator does, so its
 * failures are ours: 415001, 413001 (while reading, at `http_server.max_body_bytes`) and 400001.
 * An `optional` body may be absent (no bytes at all): it reads as `{}`.
 */
export function jsonBody(options: { optional?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const absent = c.req.header("content-length") === "0" || c.req.raw.body === null;
    if (options.optional && absent) cacheBodyText(c, "{}");
    else await readJson(c, bodyLimit(c));
    await next();
  };
}
