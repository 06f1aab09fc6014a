/**
 * The OpenAPI 3.1 document of an app, generated from its route declarations by
 * `@hono/zod-openapi`. What is the same for every operation is added here rather than declared on
 * each: the tenant and request-id parameters, the error responses (a route's own `x-errors` codes
 * plus the ones every route can answer) with one example body per code from the real
 * constructors (docs/errors.md), which operations need no API key (the rule the auth middleware
 * applies), the security schemes and the tag descriptions.
 *
 * Bodies and records are named components: a zod schema with `meta({ id })`, converted by zod
 * itself (`z.toJSONSchema`, JSON Schema 2020-12, the dialect of OpenAPI 3.1), which says "this or
 * null" of a nullable reference correctly where the generator's own converter does not.
 */
import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { z } from "zod";
import { ErrorBodySchema, ValidationErrorBodySchema } from "../../api/schemas.ts";
import type { Manifest } from "../../config/schema.ts";
import type { ApiError } from "../../errors.ts";
import type { AddOn } from "../kit/mod.ts";
import { authEnabled, isPublic, publicPaths } from "../kit/mod.ts";
import type { Routes } from "../kit/mod.ts";
import { errorExamples, validationExample } from "./examples.ts";

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** The OpenAPI version the document declares. */
export const OPENAPI_VERSION = "3.1.0";

const TAG_DESCRIPTIONS: Record<string, string> = {
  Agent: "The agent this server runs: its model, tools and protocols.",
  Health: "Liveness and readiness (always open) and metrics.",
  Reference: "This document and its HTML rendering.",
  Sessions: "A session is the durable conversation boundary.",
  Messages: "A session's conversation, in order; what the next run sees.",
  Checkpoints: "Saved states of a session, from which runs start.",
  Runs: "One execution of the agent graph inside a session.",
};

const REQUEST_ID_HEADER = { $ref: "#/components/headers/RequestId" };

/** What every operation's completion needs to know. */
interface Context {
  auth: boolean;
  open: Set<string>;
  examples: Map<number, ApiError>;
}

/** Builds the OpenAPI 3.1 document of `app`, which serves `manifest` with `addOns`. */
export function buildOpenApiDocument(
  app: Routes,
  manifest: Manifest,
  addOns: readonly AddOn[],
): Json {
  const ctx: Context = {
    auth: authEnabled(manifest),
    open: publicPaths(manifest, addOns.flatMap((a) => a.publicPaths)),
    examples: errorExamples(manifest),
  };
  const descriptions = {
    ...TAG_DESCRIPTIONS,
    ...Object.fromEntries(addOns.map((a) => [a.tag.name, a.tag.description])),
  };
  const generator = new OpenAPIHono();
  const tags: string[] = [];
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    for (const tag of definition.route.tags ?? []) if (!tags.includes(tag)) tags.push(tag);
    generator.openAPIRegistry.registerPath(complete(definition.route, ctx));
  }
  const registry = generator.openAPIRegistry;
  registry.registerComponent("parameters", "TenantId", {
    name: "X-Tenant-ID",
    in: "header",
    required: false,
    description: "The tenant whose records the request sees; the manifest's " +
      "`runtime.default_tenant_id` when absent (a tenant-bound API key decides it instead).",
    schema: { $ref: "#/components/schemas/ClientId" },
  });
  registry.registerComponent("parameters", "RequestId", {
    name: "X-Request-ID",
    in: "header",
    required: false,
    description: "Echoed when well-formed (1–128 of `A-Z a-z 0-9 . _ : -`), else generated.",
    schema: { type: "string", maxLength: 128 },
  });
  registry.registerComponent("headers", "RequestId", {
    description: "The request's id, also in every log line of the request.",
    schema: { type: "string" },
  });
  if (ctx.auth) {
    registry.registerComponent("securitySchemes", "bearerAuth", {
      type: "http",
      scheme: "bearer",
      description: "`Authorization: Bearer <API key>`.",
    });
    registry.registerComponent("securitySchemes", "apiKeyHeader", {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description: "`X-API-Key: <API key>` (wins over `Authorization` when both are sent).",
    });
  }
  const doc = generator.getOpenAPI31Document({
    openapi: OPENAPI_VERSION,
    info: {
      title: `${manifest.agent.name} (agentd)`,
      version: manifest.agent.version,
      description: (manifest.agent.description ? `${manifest.agent.description}\n\n` : "") +
        "The native session-based API of an agentd server: sessions, messages, checkpoints " +
        "and runs, attached (SSE) or detached. Errors are `ErrorBody` or, for 422, " +
        "`ValidationErrorBody`; `code` is the HTTP status times 1000 plus a sub-index.",
    },
    servers: [{ url: manifest.http_server?.public_url ?? "/" }],
    tags: tags.map((name) =>
      descriptions[name] ? { name, description: descriptions[name] } : { name }
    ),
    // Declared either way, so a reader (and a linter) knows: a key, or none at all.
    security: ctx.auth ? [{ bearerAuth: [] }, { apiKeyHeader: [] }] : [],
  }) as unknown as Json;
  (doc.components as Json).schemas = namedComponents(doc);
  return doc;
}

const COMPONENT = "#/components/schemas/";

/** A declaration's content map (media type -> schema). */
type Content = NonNullable<NonNullable<RouteConfig["request"]>["body"]>["content"];

/**
 * Every named schema the document references (also through other components), converted by zod
 * in one pass so that each references the others by name.
 */
function namedComponents(doc: Json): Record<string, Json> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `${COMPONENT}${id}`,
    io: "input",
    unrepresentable: "any",
  }) as unknown as { schemas: Record<string, Json> };
  const used: Record<string, Json> = {};
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    const ref = (node as Json).$ref;
    if (typeof ref === "string" && ref.startsWith(COMPONENT)) {
      const name = ref.slice(COMPONENT.length);
      if (!(name in used)) {
        if (!schemas[name]) throw new Error(`no schema named ${name}`);
        const { $schema: _, $id: __, ...schema } = schemas[name];
        used[name] = { ...withoutSafeBounds(schema) as Json, ...discriminator(name) };
        visit(used[name]);
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(doc.paths);
  return Object.fromEntries(Object.keys(schemas).filter((n) => n in used).map((n) => [n, used[n]]));
}

/**
 * The OpenAPI `discriminator` of a named discriminated union whose members are named too (the run
 * event catalogue: generators pick the member by `kind`); nothing for other schemas.
 */
function discriminator(name: string): Json {
  const def = z.globalRegistry._idmap.get(name)?._zod.def as
    | { type: string; discriminator?: string; options?: z.ZodObject[] }
    | undefined;
  if (def?.type !== "union" || !def.discriminator || !def.options) return {};
  const key = def.discriminator;
  const mapping: Record<string, string> = {};
  for (const option of def.options) {
    const id = option.meta()?.id;
    const values = (option.shape[key]?._zod.def as { values?: unknown[] } | undefined)?.values;
    if (!id || values?.length !== 1) return {};
    mapping[String(values[0])] = `${COMPONENT}${id}`;
  }
  return { discriminator: { propertyName: key, mapping } };
}

/** Drops zod's safe-integer bounds (noise to a reader) from every integer schema. */
function withoutSafeBounds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSafeBounds);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (Math.abs(v as number) === Number.MAX_SAFE_INTEGER && (k === "minimum" || k === "maximum")) {
      continue;
    }
    out[k] = withoutSafeBounds(v);
  }
  return out;
}

/** A declared body's schema as the document holds it: a reference to its named component. */
function bodySchema(schema: unknown): Json {
  if (schema === null || typeof schema !== "object" || !("_zod" in schema)) return schema as Json;
  const id = (schema as z.ZodType).meta()?.id;
  if (id) return { $ref: `${COMPONENT}${id}` };
  // An unnamed one (a free-form object) stands in place; it may not hide a named one.
  const { $schema: _, ...inline } = z.toJSONSchema(schema as z.ZodType, {
    io: "input",
    unrepresentable: "any",
  }) as Json;
  if (inline.$defs) throw new Error("an unnamed body schema holds named ones: give it an id");
  return inline;
}

/**
 * A content map (media type -> schema) with its schemas as `bodySchema` has them. An SSE stream is
 * declared with its `itemSchema` (OpenAPI 3.2's name: the schema of each event's `data`), which
 * the document gives as the media type's `schema`: OpenAPI 3.1 has no field for the schema of each
 * event, and that is where the mainstream generators look for it (`@hey-api/openapi-ts` types its
 * SSE client's items with it, `openapi-typescript` the response content), so a generated client's
 * stream yields typed events instead of strings (docs/api.md, "The OpenAPI document").
 */
function content(map: unknown): Content {
  if (map === null || typeof map !== "object") return map as Content;
  return Object.fromEntries(
    Object.entries(map as Record<string, Json>).map(([type, { itemSchema, ...media }]) => {
      const schema = itemSchema ?? media.schema;
      return [type, { ...media, ...(schema ? { schema: bodySchema(schema) } : {}) }];
    }),
  ) as Content;
}

/** A declaration with what every operation has: parameters, error responses, security. */
function complete(route: RouteConfig, ctx: Context): RouteConfig {
  const { "x-errors": declared = [], responses, ...rest } = route as RouteConfig & {
    "x-errors"?: number[];
  };
  const open = isPublic(ctx.open, route.method.toUpperCase(), route.path);
  const codes = [...declared];
  if (!open) codes.push(400002);
  if (ctx.auth && !open) codes.push(401001, 403001);
  // An add-on that answers its own errors (A2A) declares them as its `default` response.
  if (!responses.default) codes.push(500000);

  const out: RouteConfig["responses"] = {};
  for (const [status, response] of Object.entries(responses)) {
    if (status !== "default") out[status] = withRequestId(response as Json);
  }
  const body = rest.request?.body;
  const byStatus = new Map<number, ApiError[]>();
  for (const code of new Set(codes)) {
    const example = (code === 422000 ? validationExample(route) : undefined) ??
      ctx.examples.get(code);
    if (!example) throw new Error(`no example for error code ${code}`);
    byStatus.set(example.status, [...(byStatus.get(example.status) ?? []), example]);
  }
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: list.map((e) =>
        `\`${e.code}\`: ${e.fields ? "validation failed (`fields` lists each field)" : e.message}`
      ).join("; "),
      headers: { "x-request-id": REQUEST_ID_HEADER },
      content: {
        "application/json": {
          schema: bodySchema(status === 422 ? ValidationErrorBodySchema : ErrorBodySchema),
          examples: Object.fromEntries(list.map((e) => [String(e.code), { value: e.toBody() }])),
        },
      },
    };
  }
  if (responses.default) out.default = responses.default;
  return {
    ...rest,
    ...(body
      ? { request: { ...rest.request, body: { ...body, content: content(body.content) } } }
      : {}),
    parameters: [
      ...(open ? [] : [{ $ref: "#/components/parameters/TenantId" }]),
      { $ref: "#/components/parameters/RequestId" },
    ],
    responses: out,
    ...(ctx.auth && open ? { security: [] } : {}),
  };
}

function withRequestId(response: Json): RouteConfig["responses"][string] {
  return {
    ...response,
    headers: { "x-request-id": REQUEST_ID_HEADER, ...(response.headers as Json | undefined) },
    ...(response.content ? { content: content(response.content) } : {}),
  } as RouteConfig["responses"][string];
}
