/**
 * A structural check of an OpenAPI 3.1 document, for the tests of the API reference
 * (openapi_test.ts, docs_page_test.ts): the fixed fields and their types, and every `$ref`.
 */

/** A JSON object. */
export type Json = Record<string, unknown>;

/** The methods a path item may hold. */
export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** `/v1/runs/{run_id}` -> `/v1/runs/{}`: parameter names do not matter for coverage. */
export function shape(path: string): string {
  return path.replace(/\{[^}]+\}/g, "{}");
}

/** Follows a local JSON pointer (`#/components/schemas/Run`). */
export function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let here: unknown = doc;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (here === null || typeof here !== "object" || !(key in here)) return undefined;
    here = (here as Json)[key];
  }
  return here;
}

export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/**
 * A structural validation of an OpenAPI 3.1 document: the fixed fields and their types, operation
 * and response shapes, path parameters against path templates, unique operation ids, security
 * requirements naming declared schemes, JSON Schema `type` values, and every `$ref` resolving.
 * Returns one line per problem.
 */
export function validateOpenApi31(doc: Json): string[] {
  const problems: string[] = [];
  const bad = (where: string, what: string) => problems.push(`${where}: ${what}`);

  if (typeof doc.openapi !== "string" || !/^3\.1\.\d+$/.test(doc.openapi)) {
    bad("openapi", `must be 3.1.x, is ${JSON.stringify(doc.openapi)}`);
  }
  const info = doc.info;
  if (!isObject(info)) bad("info", "missing");
  else {
    if (typeof info.title !== "string" || info.title === "") bad("info.title", "missing");
    if (typeof info.version !== "string" || info.version === "") bad("info.version", "missing");
  }
  for (const key of Object.keys(doc)) {
    if (
      !key.startsWith("x-") &&
      ![
        "openapi",
        "info",
        "jsonSchemaDialect",
        "servers",
        "paths",
        "webhooks",
        "components",
        "security",
        "tags",
        "externalDocs",
      ].includes(key)
    ) bad(key, "not a field of the OpenAPI object");
  }
  if (!isObject(doc.paths)) bad("paths", "missing");
  if (Array.isArray(doc.servers)) {
    doc.servers.forEach((s, i) => {
      if (!isObject(s) || typeof s.url !== "string") bad(`servers[${i}]`, "needs a url");
    });
  }
  const tagNames = new Set<string>();
  for (const tag of (doc.tags ?? []) as Json[]) {
    if (typeof tag.name !== "string") bad("tags", "a tag without a name");
    else if (tagNames.has(tag.name)) bad("tags", `${tag.name} twice`);
    else tagNames.add(tag.name);
  }

  const components = (doc.components ?? {}) as Json;
  const schemes = (components.securitySchemes ?? {}) as Json;
  for (const [name, scheme] of Object.entries(schemes)) {
    if (
      !isObject(scheme) || !["apiKey", "http", "mutualTLS", "oauth2", "openIdConnect"].includes(
        String(scheme.type),
      )
    ) bad(`components.securitySchemes.${name}`, "bad type");
    else if (
      scheme.type === "apiKey" && (!scheme.name || !["query", "header", "cookie"].includes(
        String(scheme.in),
      ))
    ) bad(`components.securitySchemes.${name}`, "apiKey needs name and in");
    else if (scheme.type === "http" && typeof scheme.scheme !== "string") {
      bad(`components.securitySchemes.${name}`, "http needs scheme");
    }
  }
  const checkSecurity = (where: string, security: unknown) => {
    if (security === undefined) return;
    if (!Array.isArray(security)) return bad(where, "security must be an array");
    for (const requirement of security) {
      for (const name of Object.keys(requirement as Json)) {
        if (!(name in schemes)) bad(where, `security names undeclared scheme ${name}`);
      }
    }
  };
  checkSecurity("security", doc.security);
  for (const [name, schema] of Object.entries((components.schemas ?? {}) as Json)) {
    if (!isObject(schema) && typeof schema !== "boolean") {
      bad(`components.schemas.${name}`, "not a schema");
    }
  }

  const operationIds = new Set<string>();
  const shapes = new Map<string, string>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    if (!path.startsWith("/")) bad(path, "a path must start with /");
    const seen = shapes.get(shape(path));
    if (seen) bad(path, `identical to ${seen} but for parameter names`);
    shapes.set(shape(path), path);
    if (!isObject(item)) {
      bad(path, "not a path item");
      continue;
    }
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!HTTP_METHODS.includes(method)) {
        if (!["summary", "description", "servers", "parameters", "$ref"].includes(method)) {
          bad(path, `${method} is not a field of a path item`);
        }
        continue;
      }
      if (!isObject(op)) {
        bad(where, "not an operation");
        continue;
      }
      if (typeof op.operationId === "string") {
        if (operationIds.has(op.operationId)) bad(where, `operationId ${op.operationId} twice`);
        operationIds.add(op.operationId);
      }
      for (const tag of (op.tags ?? []) as string[]) {
        if (!tagNames.has(tag)) bad(where, `tag ${tag} is not declared`);
      }
      checkSecurity(where, op.security);
      const params = ((op.parameters ?? []) as Json[]).map((p) =>
        typeof p.$ref === "string" ? resolvePointer(doc, p.$ref) as Json : p
      );
      const inPath = new Set<string>();
      for (const p of params) {
        if (!isObject(p)) continue; // reported as an unresolved $ref below
        if (typeof p.name !== "string") bad(where, "a parameter without a name");
        if (!["query", "header", "path", "cookie"].includes(String(p.in))) {
          bad(where, `parameter ${p.name}: bad in ${p.in}`);
        }
        if ((p.schema === undefined) === (p.content === undefined)) {
          bad(where, `parameter ${p.name}: needs exactly one of schema and content`);
        }
        if (p.in === "path") {
          inPath.add(String(p.name));
          if (p.required !== true) bad(where, `path parameter ${p.name} must be required`);
        }
      }
      for (const name of templated) {
        if (!inPath.has(name)) bad(where, `path parameter {${name}} is not described`);
      }
      for (const name of inPath) {
        if (!templated.includes(name)) bad(where, `path parameter ${name} is not in the path`);
      }
      if (op.requestBody !== undefined) {
        const body = op.requestBody as Json;
        if (!isObject(body.content)) bad(where, "requestBody needs content");
        else checkContent(`${where} requestBody`, body.content, bad);
      }
      const responses = op.responses;
      if (!isObject(responses) || Object.keys(responses).length === 0) {
        bad(where, "needs responses");
        continue;
      }
      for (const [status, response] of Object.entries(responses)) {
        if (status !== "default" && !/^[1-5](\d\d|XX)$/.test(status)) {
          bad(where, `bad response key ${status}`);
        }
        const r = (isObject(response) && typeof response.$ref === "string"
          ? resolvePointer(doc, response.$ref)
          : response) as Json;
        if (!isObject(r) || typeof r.description !== "string") {
          bad(`${where} ${status}`, "a response needs a description");
          continue;
        }
        if (r.content !== undefined) {
          checkContent(`${where} ${status}`, r.content as Json, bad);
        }
      }
    }
  }

  // Every $ref anywhere resolves, and every JSON Schema `type` is a JSON Schema type.
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
    if (!isObject(node)) return;
    if (typeof node.$ref === "string" && resolvePointer(doc, node.$ref) === undefined) {
      bad(where, `$ref ${node.$ref} does not resolve`);
    }
    if (where.includes("schema") || where.includes("Schema")) {
      const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [
        node.type,
      ];
      for (const t of types) {
        if (typeof t === "string" && !JSON_TYPES.has(t) && !where.endsWith(".properties")) {
          bad(where, `bad type ${t}`);
        }
      }
    }
    for (const [k, v] of Object.entries(node)) walk(v, `${where}.${k}`);
  };
  walk(doc, "#");
  return problems;
}

function checkContent(where: string, content: Json, bad: (w: string, m: string) => void) {
  for (const [type, media] of Object.entries(content)) {
    if (!/^[a-z]+\/[a-z0-9.+*-]+$/i.test(type)) bad(where, `bad media type ${type}`);
    if (!isObject(media)) {
      bad(where, `${type} is not a media type object`);
      continue;
    }
    for (const key of Object.keys(media)) {
      if (!key.startsWith("x-") && !["schema", "example", "examples", "encoding"].includes(key)) {
        bad(where, `${type}: ${key} is not a field of a media type object`);
      }
    }
    for (const [name, example] of Object.entries((media.examples ?? {}) as Json)) {
      if (!isObject(example) || !("value" in example || "$ref" in example)) {
        bad(where, `${type}: example ${name} has no value`);
      }
    }
  }
}
