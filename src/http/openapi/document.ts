/**
 * Builds the OpenAPI 3.1 document from the route registry: every schema is converted from zod
 * (`z.toJSONSchema`, JSON Schema 2020-12, the dialect of OpenAPI 3.1) in one pass, so named shapes
 * become `#/components/schemas/...` references and nothing is written twice.
 */
import { z } from "zod";
import {
  CapabilityOverrideSchema,
  CheckpointSchema,
  CheckpointStateSchema,
  ClientIdSchema,
  ContextVarSchema,
  DataPartSchema,
  ErrorBodySchema,
  MessageInputSchema,
  MessageSchema,
  ModelConfigOverrideSchema,
  ModelConfigSchema,
  PartSchema,
  PatchOperationSchema,
  RoleSchema,
  RunErrorSchema,
  RunRequestSchema,
  RunSchema,
  RunStartedSchema,
  RunStatusSchema,
  SessionCreateSchema,
  SessionSchema,
  TextPartSchema,
  ToolCallSchema,
  ToolDefinitionSchema,
  ValidationErrorBodySchema,
} from "../../api/schemas.ts";
import { InferenceParamsSchema, type Manifest, RetrySchema } from "../../config/schema.ts";
import { RUN_EVENT_KINDS, RunEventSchema, RunEventSchemas } from "../../engine/events.ts";
import { type ApiError, errors } from "../../errors.ts";
import type { AddOn } from "../kit/addon.ts";
import { authEnabled } from "../kit/auth.ts";
import type { OperationSpec } from "../kit/openapi.ts";
import { maxBodyBytes } from "../kit/settings.ts";
import {
  CheckpointListSchema,
  HealthSchema,
  MessageListSchema,
  nativeOperations,
  ReadySchema,
  RunListSchema,
  SessionListSchema,
} from "./registry.ts";

/** A JSON object of the document. */
export type Json = Record<string, unknown>;

/** The OpenAPI version the document declares. */
export const OPENAPI_VERSION = "3.1.0";

/** Schemas that become named components (the name is how the reference reads). */
function namedSchemas(addOns: readonly AddOn[]): [string, z.ZodType][] {
  return [
    ["ClientId", ClientIdSchema],
    ["TextPart", TextPartSchema],
    ["DataPart", DataPartSchema],
    ["Part", PartSchema],
    ["ToolCall", ToolCallSchema],
    ["Role", RoleSchema],
    ["MessageInput", MessageInputSchema],
    ["Message", MessageSchema],
    ["MessageList", MessageListSchema],
    ["Session", SessionSchema],
    ["SessionCreate", SessionCreateSchema],
    ["SessionList", SessionListSchema],
    ["RunStatus", RunStatusSchema],
    ["RunError", RunErrorSchema],
    ["Run", RunSchema],
    ["RunList", RunListSchema],
    ["CheckpointState", CheckpointStateSchema],
    ["Checkpoint", CheckpointSchema],
    ["CheckpointList", CheckpointListSchema],
    ["InferenceParams", InferenceParamsSchema],
    ["ModelConfigRetry", RetrySchema],
    ["ModelConfigOverride", ModelConfigOverrideSchema],
    ["ModelConfig", ModelConfigSchema],
    ["CapabilityOverride", CapabilityOverrideSchema],
    ["ContextVar", ContextVarSchema],
    ["ToolDefinition", ToolDefinitionSchema],
    ["RunRequest", RunRequestSchema],
    ["RunStarted", RunStartedSchema],
    ["ErrorBody", ErrorBodySchema],
    ["ValidationErrorBody", ValidationErrorBodySchema],
    ["PatchOperation", PatchOperationSchema],
    ["RunEvent", RunEventSchema],
    ...RUN_EVENT_KINDS.map((kind): [string, z.ZodType] => [
      eventComponent(kind),
      RunEventSchemas[kind],
    ]),
    ["Health", HealthSchema],
    ["Ready", ReadySchema],
    ...addOns.flatMap((a) => a.schemas),
  ];
}

/** `run_started` -> `RunStartedEvent`. */
export function eventComponent(kind: string): string {
  return kind.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("") + "Event";
}

/**
 * Collects schemas, converts them all in one `z.toJSONSchema` call and hands back named
 * components and inline schemas (which may reference the components).
 */
class SchemaSet {
  #registry = z.registry<{ id: string }>();
  #inline = new Map<string, Json>();
  #named = new Map<z.ZodType, string>();

  /** Registers a named component. */
  component(name: string, schema: z.ZodType): void {
    this.#registry.add(schema, { id: name });
    this.#named.set(schema, name);
  }

  /** A reference when `schema` is a named component, else the schema in place. */
  use(schema: z.ZodType): Json {
    const name = this.#named.get(schema);
    return name ? ref(name) : this.inline(schema);
  }

  /** A schema used in place; filled in by `build()`. */
  inline(schema: z.ZodType): Json {
    const id = `~inline${this.#inline.size}`;
    const holder: Json = {};
    // Inline schemas are fresh objects, so no other schema can come to reference them.
    this.#registry.add(schema, { id });
    this.#inline.set(id, holder);
    return holder;
  }

  /** Converts everything; returns the components. */
  build(): Record<string, Json> {
    const { schemas } = z.toJSONSchema(this.#registry, {
      uri: (id) => `#/components/schemas/${id}`,
      io: "input",
      unrepresentable: "any",
    }) as { schemas: Record<string, Json> };
    const components: Record<string, Json> = {};
    for (const [id, schema] of Object.entries(schemas)) {
      const clean = tidy(schema) as Json;
      delete clean.$schema;
      delete clean.$id;
      const holder = this.#inline.get(id);
      if (holder) Object.assign(holder, clean);
      else components[id] = clean;
    }
    return components;
  }
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Drops zod's safe-integer bounds (noise to a reader) from every integer schema. */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if ((k === "minimum" && v === -MAX_SAFE) || (k === "maximum" && v === MAX_SAFE)) continue;
    out[k] = tidy(v);
  }
  return out;
}

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

/** A parameter's schema without its `null` alternative (a query string has no null). */
function withoutNull(schema: Json): Json {
  const anyOf = schema.anyOf as Json[] | undefined;
  if (anyOf) {
    const rest = anyOf.filter((s) => s.type !== "null");
    if (rest.length === 1) {
      const { anyOf: _, ...others } = schema;
      return { ...rest[0], ...others };
    }
  }
  return schema;
}

/** One example error per code, from the real constructors (docs/errors.md). */
function errorExamples(manifest: Manifest): Map<number, ApiError> {
  const limit = maxBodyBytes(manifest);
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
    errors.bodyTooLarge(limit),
    errors.unsupportedMediaType("text/plain"),
    errors.validation([{
      field: "per_page",
      errors: [{
        code: "range",
        message: "must be an integer from 1 to 1000",
        params: { min: 1, max: 1000 },
      }],
    }]),
    errors.internal(),
    errors.unavailable("the store"),
    errors.shuttingDown(),
  ];
  return new Map(list.map((e) => [e.code, e]));
}

/** Builds the OpenAPI 3.1 document of an app serving `manifest`. */
export function buildOpenApiDocument(manifest: Manifest, addOns: readonly AddOn[]): Json {
  const auth = authEnabled(manifest);
  const publicDocs = manifest.http_server?.auth?.public_docs ?? true;
  const schemas = new SchemaSet();
  for (const [name, schema] of namedSchemas(addOns)) schemas.component(name, schema);
  const examples = errorExamples(manifest);
  const ops = [...nativeOperations(), ...addOns.flatMap((a) => a.operations)];

  const paths: Record<string, Json> = {};
  for (const op of ops) {
    const isPublic = op.public === "always" || (op.public === "docs" && publicDocs);
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`operation listed twice: ${op.method} ${op.path}`);
    item[op.method] = operation(op, { schemas, examples, auth, isPublic });
  }

  const components: Json = {
    schemas: schemas.build(),
    parameters: {
      TenantId: {
        name: "X-Tenant-ID",
        in: "header",
        required: false,
        description: "The tenant whose records the request sees; the manifest's " +
          "`runtime.default_tenant_id` when absent (a tenant-bound API key decides it instead).",
        schema: ref("ClientId"),
      },
      RequestId: {
        name: "X-Request-ID",
        in: "header",
        required: false,
        description: "Echoed when well-formed (1–128 of `A-Z a-z 0-9 . _ : -`), else generated.",
        schema: { type: "string", maxLength: 128 },
      },
    },
    headers: {
      RequestId: {
        description: "The request's id, also in every log line of the request.",
        schema: { type: "string" },
      },
    },
  };
  // The event union is discriminated by `kind`: say so, so generators pick the right member.
  const runEvent = (components.schemas as Record<string, Json>).RunEvent;
  runEvent.discriminator = {
    propertyName: "kind",
    mapping: Object.fromEntries(
      RUN_EVENT_KINDS.map((k) => [k, `#/components/schemas/${eventComponent(k)}`]),
    ),
  };
  runEvent.description = "One run event: the `data:` of a native SSE frame whose `event:` is " +
    "its `kind`.";

  const doc: Json = {
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
    tags: tags(ops, addOns),
    paths,
    components,
  };
  if (auth) {
    components.securitySchemes = {
      bearerAuth: {
        type: "http",
        scheme: "bearer",
        description: "`Authorization: Bearer <API key>`.",
      },
      apiKeyHeader: {
        type: "apiKey",
        in: "header",
        name: "X-API-Key",
        description: "`X-API-Key: <API key>` (wins over `Authorization` when both are sent).",
      },
    };
    doc.security = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
  }
  return finishParameters(doc);
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  Health: "Liveness and readiness (always open) and metrics.",
  Reference: "This document and its HTML rendering.",
  Sessions: "A session is the durable conversation boundary.",
  Messages: "A session's conversation, in order; what the next run sees.",
  Checkpoints: "Saved states of a session, from which runs start.",
  Runs: "One execution of the agent graph inside a session.",
};

function tags(ops: OperationSpec[], addOns: readonly AddOn[]): Json[] {
  const descriptions = {
    ...TAG_DESCRIPTIONS,
    ...Object.fromEntries(addOns.map((a) => [a.tag.name, a.tag.description])),
  };
  const names = [...new Set(ops.map((op) => op.tag))];
  return names.map((name) =>
    descriptions[name] ? { name, description: descriptions[name] } : { name }
  );
}

interface OperationContext {
  schemas: SchemaSet;
  examples: Map<number, ApiError>;
  auth: boolean;
  isPublic: boolean;
}

function operation(op: OperationSpec, ctx: OperationContext): Json {
  const { schemas } = ctx;
  const parameters: Json[] = [];
  for (const [name, description] of Object.entries(op.pathParams ?? {})) {
    parameters.push({ name, in: "path", required: true, description, schema: { type: "string" } });
  }
  for (const [name, schema] of Object.entries(op.query?.shape ?? {})) {
    const s = schema as z.ZodType;
    const isArray = unwrapType(s) === "array";
    parameters.push({
      name,
      in: "query",
      required: !s.safeParse(undefined).success,
      ...((op.queryDescriptions?.[name] ?? s.description)
        ? { description: op.queryDescriptions?.[name] ?? s.description }
        : {}),
      // Filled in by build(); `finishParameters` then drops `null` (a query string has none).
      schema: schemas.inline(s),
      ...(isArray ? { style: "form", explode: true } : {}),
    });
  }
  if (!ctx.isPublic) parameters.push({ $ref: "#/components/parameters/TenantId" });
  parameters.push({ $ref: "#/components/parameters/RequestId" });

  const out: Json = {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    parameters,
  };
  if (op.body) {
    out.requestBody = {
      required: op.body.required,
      ...(op.body.description ? { description: op.body.description } : {}),
      content: { "application/json": { schema: schemas.use(op.body.schema) } },
    };
  }
  out.responses = responses(op, ctx);
  if (ctx.auth && ctx.isPublic) out.security = [];
  return out;
}

function unwrapType(schema: z.ZodType): string {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType; out?: z.ZodType };
  for (;;) {
    if (def.innerType && ["optional", "nullable", "default", "prefault"].includes(def.type)) {
      def = def.innerType._zod.def as typeof def;
    } else if (def.type === "pipe" && def.out) {
      // A preprocessed query list: what it becomes is what it documents.
      def = def.out._zod.def as typeof def;
    } else {
      return def.type;
    }
  }
}

function responses(op: OperationSpec, ctx: OperationContext): Json {
  const { success } = op;
  const headers: Json = { "x-request-id": { $ref: "#/components/headers/RequestId" } };
  for (const [name, description] of Object.entries(success.headers ?? {})) {
    headers[name] = { description, schema: { type: "string" } };
  }
  const ok: Json = { description: success.description, headers };
  if (success.json) {
    ok.content = { "application/json": { schema: ctx.schemas.use(success.json) } };
  } else if (success.sse) {
    ok.content = {
      "text/event-stream": {
        schema: { type: "string", description: success.sse.description },
        // OpenAPI 3.2 calls this `itemSchema`; 3.1 has no field for the schema of each event.
        ...(success.sse.events ? { "x-itemSchema": ctx.schemas.use(success.sse.events) } : {}),
      },
    };
  } else if (success.html) {
    ok.content = { "text/html": { schema: { type: "string" } } };
  } else if (success.text) {
    ok.content = { [success.text]: { schema: { type: "string" } } };
  }
  const out: Json = { [String(success.status)]: ok };

  const codes = [...op.errors];
  if (!ctx.isPublic) codes.push(400002);
  if (ctx.auth && !ctx.isPublic) codes.push(401001, 403001);
  // The A2A add-on answers its own failures, 500 included, as A2A error bodies (below).
  if (!op.a2aErrors) codes.push(500000);
  const byStatus = new Map<number, number[]>();
  for (const code of new Set(codes)) {
    const status = Math.floor(code / 1000);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const described = list.map((code) => {
      const example = ctx.examples.get(code);
      if (!example) throw new Error(`no example for error code ${code}`);
      return example;
    });
    out[String(status)] = {
      description: described.map((e) =>
        `\`${e.code}\`: ${e.fields ? "validation failed (`fields` lists each field)" : e.message}`
      ).join("; "),
      headers: { "x-request-id": { $ref: "#/components/headers/RequestId" } },
      content: {
        "application/json": {
          schema: ref(status === 422 ? "ValidationErrorBody" : "ErrorBody"),
          examples: Object.fromEntries(
            described.map((e) => [String(e.code), { value: e.toBody() }]),
          ),
        },
      },
    };
  }
  if (op.a2aErrors) {
    out.default = {
      description: "An A2A error: a `google.rpc.Status` body " +
        '`{"error": {"code", "status", "message", "details"}}` whose `details` hold a ' +
        "`google.rpc.ErrorInfo` (`reason`, such as `TASK_NOT_FOUND`); see docs/a2a.md.",
      content: { "application/json": { schema: { type: "object" } } },
    };
  }
  return out;
}

/** Removes the `null` alternative of every query parameter's schema (after `build()`). */
function finishParameters(doc: Json): Json {
  for (const item of Object.values(doc.paths as Record<string, Json>)) {
    for (const op of Object.values(item) as Json[]) {
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === "query" && p.schema) p.schema = withoutNull(p.schema as Json);
      }
    }
  }
  return doc;
}
