/**
 * The API reference: `/v1/openapi.json` is a well-formed OpenAPI 3.1 document (a structural check
 * of the 3.1 shape and of every `$ref`), documents every route the router serves (and nothing it
 * does not), matches what the server really sends, is named by the docs (every path in
 * docs/api.md or an add-on's page). The structural check is openapi_check.ts; `/docs` is
 * docs_page_test.ts.
 */
import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import { protocolAddOns } from "../../src/server.ts";
import { createLogger } from "../../src/log.ts";
import { RUN_EVENT_KINDS, runEventSchema } from "../../src/api/events.ts";
import { PLAYGROUND_PATHS } from "../../src/http/playground/mod.ts";
import { agUiEventSchema } from "../../src/protocols/ag_ui/event_schemas.ts";
import {
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
} from "../../src/protocols/a2a/responses.ts";
import { parseSse, readEvents, startTestServer, type TestServer } from "../_kit/mod.ts";
import {
  HTTP_METHODS,
  isObject,
  type Json,
  resolvePointer,
  shape,
  validateOpenApi31,
} from "./openapi_check.ts";

/**
 * Routes the document leaves out on purpose: the playground's page and static assets (a web UI,
 * not an API). `ALL` routes (middleware, the A2A fallbacks) are skipped as a kind.
 */
const EXCLUDED = new Set(Object.keys(PLAYGROUND_PATHS).map((path) => `GET ${path}`));

/**
 * Router routes that serve several documented operations: the A2A add-on dispatches
 * `POST /tasks/{id}:cancel` and `:subscribe` from one `/tasks/:ref` route (a Hono parameter
 * cannot end in a literal). Such a route is covered by documented paths that are instances of it.
 */
const MULTIPLEXED = new Set(["POST /a2a/tasks/{}"]);

/**
 * The A2A HTTP+JSON operations are also served under the `/{tenant}` prefix, documented once
 * without it (their descriptions name the prefix; as paths of their own they would be ambiguous):
 * `/a2a/{tenant}/...` is covered by the documented `/a2a/...` of the same method.
 */
function unprefixed(key: string): string | undefined {
  const m = /^(\w+) \/a2a\/\{\}(\/.*)$/.exec(key);
  return m ? `${m[1]} /a2a${m[2]}` : undefined;
}

/**
 * The pages that name routes: the native API's, and each add-on's, which names its routes relative
 * to its base (the default one).
 */
const ROUTE_PAGES = [
  { page: "docs/api.md", base: "" },
  { page: "docs/ag-ui.md", base: "/ag-ui" },
  { page: "docs/a2a.md", base: "/a2a" },
  { page: "docs/ai-sdk.md", base: "/ai-sdk" },
];

/**
 * How a page may name `path` in code: whole, or relative to the page's `base` (the base itself as
 * `/`, or as `<base>/...`; without a `/{tenant}` prefix when the page documents that prefix), after
 * the start of the code span or a method, and before its end, a query or an optional part.
 */
function namings(path: string, base: string, text: string): string[] {
  const forms = [path];
  if (base !== "" && (path === base || path.startsWith(`${base}/`))) {
    const relative = path.slice(base.length) || "/";
    forms.push(relative, `<base>${relative}`);
    if (text.includes("/{tenant}") && relative.startsWith("/{tenant}/")) {
      forms.push(relative.slice("/{tenant}".length));
    }
  }
  return forms.flatMap((f) =>
    ["`", " "].flatMap((start) => ["`", "?", "["].map((end) => `${start}${f}${end}`))
  );
}

/** A Hono route path as an OpenAPI path: `/v1/runs/:run_id` -> `/v1/runs/{run_id}`. */
function openApiPath(routePath: string): string {
  return routePath.split("/").map((seg) =>
    seg.startsWith(":") ? `{${seg.slice(1).replace(/\{.*$/, "").replace(/\?$/, "")}}` : seg
  ).join("/");
}

/** A `{param}` template as a regular expression (each parameter one path segment). */
function templateRegex(path: string): RegExp {
  const body = path.split(/(\{[^}]*\})/).map((part) =>
    part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${body}$`);
}

async function getJson(t: TestServer, path: string, init?: RequestInit): Promise<Json> {
  const res = await t.fetch(path, init);
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The documented property names of a component, following `$ref`s. */
function propertiesOf(doc: Json, name: string): Set<string> {
  const schema = resolvePointer(doc, `#/components/schemas/${name}`) as Json;
  return new Set(Object.keys((schema.properties ?? {}) as Json));
}

Deno.test("openapi: a valid 3.1 document that documents every route the app serves", async (tt) => {
  await using t = await startTestServer({
    manifest: { http_server: { protocol: { ag_ui: {}, a2a: {}, ai_sdk: {} } } },
  });
  const doc = await getJson(t, "/v1/openapi.json");

  await tt.step("OpenAPI 3.1 structure, every $ref resolves", () => {
    assert.deepEqual(validateOpenApi31(doc), []);
    assert.equal(doc.openapi, "3.1.0");
    assert.equal((doc.info as Json).title, "test-agent (agentd)");
  });

  await tt.step("the checker catches a broken document", () => {
    const broken = structuredClone(doc);
    (broken.paths as Json)["/v1/runs/{run_id}"] = {
      get: {
        responses: { "200": { content: { "application/json": { schema: { $ref: "#/x" } } } } },
      },
    };
    broken.openapi = "3.0.3";
    const problems = validateOpenApi31(broken);
    assert.ok(problems.some((p) => p.startsWith("openapi")), problems.join("\n"));
    assert.ok(problems.some((p) => p.includes("$ref #/x does not resolve")), problems.join("\n"));
    assert.ok(problems.some((p) => p.includes("{run_id} is not described")));
    assert.ok(problems.some((p) => p.includes("needs a description")));
  });

  await tt.step("every router route is documented, and every documented one is served", () => {
    const { server, config } = t;
    const app = createApp({
      config,
      store: server.store,
      runs: server.runs,
      log: createLogger("error", {}, () => {}),
      metrics: server.metrics,
    }, protocolAddOns(config.manifest));
    const documented = new Map<string, string>(); // "GET /v1/runs/{}" -> path
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const method of Object.keys(item as Json)) {
        if (HTTP_METHODS.includes(method)) {
          documented.set(`${method.toUpperCase()} ${shape(path)}`, path);
        }
      }
    }
    const served = new Set<string>();
    const missing: string[] = [];
    for (const route of app.routes) {
      if (route.method === "ALL") continue;
      const key = `${route.method} ${openApiPath(route.path)}`;
      if (EXCLUDED.has(key)) continue;
      const shaped = `${route.method} ${shape(openApiPath(route.path))}`;
      if (served.has(shaped)) continue; // middleware + handler of one route
      served.add(shaped);
      if (documented.has(shaped)) continue;
      const alias = unprefixed(shaped);
      if (alias && (documented.has(alias) || MULTIPLEXED.has(alias))) {
        const op = documented.get(alias);
        // The documented operation tells of the prefix.
        if (op) assert.match(JSON.stringify(doc.paths), /under the tenant prefix/);
        continue;
      }
      if (MULTIPLEXED.has(shaped)) {
        const pattern = templateRegex(shape(openApiPath(route.path)));
        const instances = [...documented.keys()].filter((k) =>
          k.startsWith(`${route.method} `) && pattern.test(k.slice(route.method.length + 1))
        );
        if (instances.length > 0) {
          for (const k of instances) served.add(k);
          continue;
        }
      }
      missing.push(key);
    }
    assert.deepEqual(missing, [], "routes the router serves but the document does not list");
    const phantom = [...documented.keys()].filter((k) => !served.has(k));
    assert.deepEqual(phantom, [], "documented operations no route serves");
    // The add-ons really were on, so their routes were part of the check.
    assert.ok(served.has("POST /ag-ui/run"));
    assert.ok(served.has("POST /a2a/message:send"));
  });

  await tt.step("every documented path is named in docs/api.md or an add-on's page", async () => {
    const pages = await Promise.all(
      ROUTE_PAGES.map(async (p) => ({
        ...p,
        text: await Deno.readTextFile(new URL(`../../${p.page}`, import.meta.url)),
      })),
    );
    const named = (path: string) =>
      pages.some(({ base, text }) => namings(path, base, text).some((n) => text.includes(n)));
    const unnamed = Object.keys(doc.paths as Json).filter((path) => !named(path));
    assert.deepEqual(unnamed, [], `paths no page of ${ROUTE_PAGES.map((p) => p.page)} names`);
    assert.ok(!named("/v1/sessions/{session_id}/nothing") && !named("/a2a/nothing"));
  });

  await tt.step("bodies, records, query parameters and errors come from the zod schemas", () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    const runRequest = resolvePointer(doc, "#/components/schemas/RunRequest") as Json;
    assert.deepEqual(runRequest.required, ["messages"]);
    assert.equal(runRequest.additionalProperties, false);
    assert.equal(((runRequest.properties as Json).messages as Json).minItems, 1);
    assert.deepEqual(
      (paths["/v1/runs"].post.requestBody as Json).content,
      { "application/json": { schema: { $ref: "#/components/schemas/RunRequest" } } },
    );
    // Nested types of the manifest schema are shared components too.
    const retry = resolvePointer(doc, "#/components/schemas/ModelConfigRetry") as Json;
    assert.deepEqual(retry.required, ["max_attempts", "initial_backoff", "max_backoff"]);

    const list = paths["/v1/sessions/{session_id}/runs"].get;
    const params = (list.parameters as Json[]).filter((p) => p.in === "query");
    assert.deepEqual(params.map((p) => p.name), [
      "per_page",
      "page",
      "ids",
      "session_ids",
      "statuses",
      "created_before",
      "created_after",
      "updated_before",
      "updated_after",
    ]);
    const perPage = params[0].schema as Json;
    assert.deepEqual([perPage.type, perPage.minimum, perPage.maximum, perPage.default], [
      "integer",
      1,
      1000,
      100,
    ]);
    assert.deepEqual((params[4].schema as Json).items, {
      $ref: "#/components/schemas/RunStatus",
    });
    assert.equal((params[5].schema as Json).format, "date-time");
    for (const path of ["/v1/sessions", "/v1/sessions/{session_id}/messages"]) {
      const names = (paths[path].get.parameters as Json[]).filter((p) => p.in === "query")
        .map((p) => p.name);
      assert.deepEqual(names, ["per_page", "page"], path);
    }

    // Both error shapes, with the codes of docs/errors.md per endpoint.
    const responses = (path: string, method: string) =>
      paths[path][method].responses as Record<string, Json>;
    const examples = (r: Json) =>
      Object.keys(((r.content as Json)["application/json"] as Json).examples as Json);
    const schemaOf = (r: Json) => ((r.content as Json)["application/json"] as Json).schema;
    const getSession = responses("/v1/sessions/{session_id}", "get");
    assert.deepEqual(examples(getSession["404"]), ["404001"]);
    assert.deepEqual(schemaOf(getSession["404"]), { $ref: "#/components/schemas/ErrorBody" });
    const listSessions = responses("/v1/sessions", "get");
    assert.deepEqual(schemaOf(listSessions["422"]), {
      $ref: "#/components/schemas/ValidationErrorBody",
    });
    const start = responses("/v1/runs", "post");
    assert.deepEqual(
      Object.keys(start).sort(),
      ["200", "400", "404", "409", "413", "415", "422", "429", "500", "503"],
    );
    assert.deepEqual(examples(start["409"]).sort(), ["409002", "409003"]);
    assert.deepEqual(examples(start["429"]), ["429001"]);
    assert.deepEqual(examples(start["400"]).sort(), ["400001", "400002"]);
    assert.deepEqual(examples(responses("/v1/runs/{run_id}/events", "get")["409"]), [
      "409004",
    ]);
    assert.ok(responses("/v1/runs/{run_id}/cancel", "put")["204"]);
    assert.ok(responses("/v1/runs/start", "post")["202"]);
    // API keys are off here: no scheme, no 401, and the document says none is needed.
    assert.deepEqual(doc.security, []);
    assert.equal(start["401"], undefined);
    // Each operation's 422 example is its own: what the server answers a body without its
    // required fields, or a query string with a parameter it does not take.
    const invalid = (path: string, method: string) =>
      ((responses(path, method)["422"].content as Json)["application/json"] as Json).examples;
    assert.deepEqual((invalid("/v1/runs", "post") as Json)["422000"], {
      value: {
        code: 422000,
        fields: [{ field: "messages", errors: [{ code: "required", message: "is required" }] }],
      },
    });
    const listed = JSON.stringify(invalid("/v1/sessions/{session_id}/runs", "get"));
    assert.match(listed, /unknown query parameter; known: per_page,page,ids/);
  });

  await tt.step("every property of every schema has a description", () => {
    const undescribed: string[] = [];
    const walk = (node: unknown, where: string, inSchema: boolean) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`, inSchema));
      if (!isObject(node)) return;
      if (inSchema && isObject(node.properties)) {
        for (const [name, property] of Object.entries(node.properties)) {
          if (!isObject(property) || typeof property.description !== "string") {
            undescribed.push(`${where}.${name}`);
          }
        }
      }
      for (const [key, value] of Object.entries(node)) {
        walk(value, `${where}/${key}`, inSchema || key === "schema" || key === "schemas");
      }
    };
    walk(doc, "#", false);
    assert.deepEqual(undescribed, []);
  });

  await tt.step("the SSE event catalogue", () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    // Each event's schema is the stream's `schema`, where generators look for it.
    for (const [path, method] of [["/v1/runs", "post"], ["/v1/runs/{run_id}/events", "get"]]) {
      const ok = (paths[path][method].responses as Json)["200"] as Json;
      const media = (ok.content as Json)["text/event-stream"] as Json;
      assert.deepEqual(media, { schema: { $ref: "#/components/schemas/RunEvent" } }, path);
    }
    const runEvent = resolvePointer(doc, "#/components/schemas/RunEvent") as Json;
    const mapping = (runEvent.discriminator as Json).mapping as Record<string, string>;
    assert.deepEqual(Object.keys(mapping), RUN_EVENT_KINDS);
    assert.equal((runEvent.oneOf as Json[]).length, RUN_EVENT_KINDS.length);
    for (const target of Object.values(mapping)) {
      const member = resolvePointer(doc, target) as Json;
      assert.ok(member, target);
      assert.ok((member.required as string[]).includes("kind"));
      assert.ok((member.required as string[]).includes("timestamp"));
    }
  });

  await tt.step("what the server sends matches the document", async () => {
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        session_id: "doc-s1",
        messages: [{ role: "user", content: [{ type: "text", value: "hello docs" }] }],
      },
    });
    assert.equal(res.status, 200);
    const events = await readEvents(res);
    assert.ok(events.length >= 4);
    for (const event of events) {
      const parsed = runEventSchema().safeParse(event);
      assert.ok(parsed.success, `${event.kind}: ${JSON.stringify(parsed.error?.issues)}`);
      // Every field on the wire is a documented property of its event component.
      const documented = propertiesOf(doc, eventName(event.kind));
      for (const key of Object.keys(event)) {
        assert.ok(documented.has(key), `${event.kind}.${key}`);
      }
    }
    const session = await getJson(t, "/v1/sessions/doc-s1");
    for (const key of Object.keys(session)) {
      assert.ok(propertiesOf(doc, "SessionRead").has(key), key);
    }
    const runs = await getJson(t, "/v1/sessions/doc-s1/runs");
    const run = (runs.items as Json[])[0];
    for (const key of Object.keys(run)) assert.ok(propertiesOf(doc, "Run").has(key), key);
    assert.deepEqual(Object.keys(runs).sort(), [...propertiesOf(doc, "RunList")].sort());
    const messages = await getJson(t, "/v1/sessions/doc-s1/messages");
    for (const m of messages.items as Json[]) {
      for (const key of Object.keys(m)) assert.ok(propertiesOf(doc, "Message").has(key), key);
    }
    // The add-ons' streams and bodies are as their schemas say.
    const agUi = await t.fetch("/ag-ui/run", {
      method: "POST",
      json: { threadId: "doc-t1", messages: [{ id: "u1", role: "user", content: "hi" }] },
    });
    for (const frame of parseSse(await agUi.text()).events) {
      const parsed = agUiEventSchema().safeParse(JSON.parse(frame.data));
      assert.ok(parsed.success, `${frame.data}: ${parsed.error}`);
    }
    const a2aMessage = { messageId: "doc-m1", role: "ROLE_USER", parts: [{ text: "hi" }] };
    const streamed = await t.fetch("/a2a/message:stream", {
      method: "POST",
      json: { message: a2aMessage },
    });
    const updates = parseSse(await streamed.text()).events;
    assert.ok(updates.length >= 3);
    for (const frame of updates) {
      const parsed = StreamResponseSchema.safeParse(JSON.parse(frame.data));
      assert.ok(parsed.success, `${frame.data}: ${parsed.error}`);
    }
    const sent = await t.fetch("/a2a/message:send", {
      method: "POST",
      json: { message: { ...a2aMessage, messageId: "doc-m2" } },
    });
    const answer = SendMessageResponseSchema.safeParse(await sent.json());
    assert.ok(answer.success, String(answer.error));
    const task = await t.fetch(`/a2a/tasks/${answer.data.task.id}`);
    assert.ok(TaskSchema.safeParse(await task.json()).success);
    const missing = await t.fetch("/v1/sessions/nope");
    assert.deepEqual(
      Object.keys(await missing.json()).sort(),
      [
        ...propertiesOf(doc, "ErrorBody"),
      ].sort(),
    );
  });
});

function eventName(kind: string): string {
  return kind.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("") + "Event";
}

Deno.test("openapi: with API keys on, the schemes are declared and public routes need none", async () => {
  await using t = await startTestServer({
    manifest: {
      http_server: {
        protocol: { a2a: {} },
        auth: { api_keys: ["openapi-test-key-0001"] },
      },
    },
  });
  // The document itself is public by default.
  const doc = await getJson(t, "/v1/openapi.json");
  assert.deepEqual(validateOpenApi31(doc), []);
  const schemes = (doc.components as Json).securitySchemes as Json;
  assert.deepEqual(schemes.bearerAuth, {
    type: "http",
    scheme: "bearer",
    description: "`Authorization: Bearer <API key>`.",
  });
  assert.equal((schemes.apiKeyHeader as Json).name, "X-API-Key");
  assert.deepEqual(doc.security, [{ bearerAuth: [] }, { apiKeyHeader: [] }]);
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (
    const [path, method] of [
      ["/healthz", "get"],
      ["/readyz", "get"],
      ["/docs", "get"],
      ["/v1/openapi.json", "get"],
      ["/a2a/.well-known/agent-card.json", "get"],
    ]
  ) {
    assert.deepEqual(paths[path][method].security, [], path);
    assert.equal((paths[path][method].responses as Json)["401"], undefined, path);
  }
  const get = paths["/v1/runs/{run_id}"].get;
  assert.equal(get.security, undefined);
  const responses = get.responses as Json;
  const example = (status: string) =>
    Object.keys(((responses[status] as Json).content as Json)["application/json"] as Json)
      .length && Object.keys(
        (((responses[status] as Json).content as Json)["application/json"] as Json)
          .examples as Json,
      );
  assert.deepEqual(example("401"), ["401001"]);
  assert.deepEqual(example("403"), ["403001"]);
  const html = await (await t.fetch("/docs")).text();
  assert.match(html, /API keys are on/);
  assert.doesNotMatch(html, /openapi-test-key-0001/);
  assert.doesNotMatch(JSON.stringify(doc), /openapi-test-key-0001/);
});
