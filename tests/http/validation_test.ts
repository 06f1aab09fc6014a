/**
 * The validation error a client programs against (docs/errors.md): issue 16's examples with their
 * exact bodies, the one rule for empty query values, bounds that are always inclusive, and a table
 * that walks every schema-backed field of every route of `/v1/openapi.json` with one bad value per
 * rule, checking the rule code, its params and the wording of its message.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { validate, withoutEmptyValues } from "../../src/http/kit/mod.ts";
import { assertError, type ErrorBody, startTestServer, type TestServer } from "../_kit/mod.ts";

type Json = Record<string, unknown>;

const RUN_INPUT = { messages: [{ role: "user", content: [{ type: "text", value: "hi" }] }] };

/** The params each rule may carry (docs/errors.md, "Validation rule codes"). */
const RULE_PARAMS: Record<string, string[]> = {
  required: [],
  type: ["expected"],
  range: ["min", "max", "exclusive_min", "exclusive_max"],
  length: ["min", "max"],
  format: ["format"],
  enum: ["allowed"],
  unknown_field: [],
  cursor: [],
  invalid: [],
};

/** Validator wording that must never reach a client: zod's texts, issue names, internals. */
const NOT_OUR_WORDS =
  /Too (small|big)|[Ee]xpected|Invalid|regex|invalid_|too_|unrecognized|custom|[<>]/;

/** Asserts a rule's message is one of ours: a lower-case phrase, no validator wording. */
function assertOurWords(message: unknown, where: string): void {
  assert.equal(typeof message, "string", `${where}: no message`);
  assert.match(message as string, /^[a-z']/, `${where}: "${message}"`);
  assert.doesNotMatch(message as string, NOT_OUR_WORDS, `${where}: "${message}"`);
}

/** A 422 body as exactly this one field with this one rule. */
const only = (field: string, rule: Json) => ({ code: 422000, fields: [{ field, errors: [rule] }] });

Deno.test("validation: the examples of issue 16, exact bodies", async (tt) => {
  await using t = await startTestServer();
  const body = async (res: Response) => {
    assert.equal(res.status, 422);
    return await res.json();
  };
  const start = (extra: Json) =>
    t.fetch("/v1/runs/start", { method: "POST", json: { ...RUN_INPUT, ...extra } });

  await tt.step("an exclusive integer bound is an inclusive min, in our words", async () => {
    assert.deepEqual(
      await body(await start({ model: { timeout: 0 } })),
      only("model.timeout", {
        code: "range",
        message: "must be an integer from 1 to 3600000",
        params: { min: 1, max: 3600000 },
      }),
    );
    assert.deepEqual(
      await body(await start({ model: { override: { inference_params: { max_tokens: 0 } } } })),
      only("model.override.inference_params.max_tokens", {
        code: "range",
        message: "must be at least 1",
        params: { min: 1 },
      }),
    );
  });

  await tt.step("a bad timestamp is one format error, without internals", async () => {
    const expected = only("created_before", {
      code: "format",
      message: "must be an RFC 3339 timestamp, e.g. 2026-11-21T10:00:00Z",
      params: { format: "date-time" },
    });
    assert.deepEqual(
      await body(await t.fetch("/v1/sessions/s1/runs?created_before=xyz")),
      expected,
    );
    // A well-formed timestamp of a day that does not exist: the same rule.
    assert.deepEqual(
      await body(await t.fetch("/v1/sessions/s1/runs?created_before=2026-13-45T00:00:00Z")),
      expected,
    );
  });

  await tt.step("per_page: a non-number is `type`, out of bounds is `range`", async () => {
    const type = only("per_page", {
      code: "type",
      message: "must be an integer",
      params: { expected: "integer" },
    });
    assert.deepEqual(await body(await t.fetch("/v1/sessions?per_page=abc")), type);
    assert.deepEqual(await body(await t.fetch("/v1/sessions?per_page=1.5")), type);
    assert.deepEqual(
      await body(await t.fetch("/v1/sessions?per_page=0")),
      only("per_page", {
        code: "range",
        message: "must be an integer from 1 to 1000",
        params: { min: 1, max: 1000 },
      }),
    );
  });

  await tt.step("an empty query value is the parameter left out, on every route", async () => {
    await (await t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s1" } })).body
      ?.cancel();
    for (
      const [path, query] of [
        ["/v1/sessions", "per_page=&page="],
        ["/v1/sessions/s1/messages", "per_page=&page="],
        ["/v1/sessions/s1/checkpoints", "per_page="],
        [
          "/v1/sessions/s1/runs",
          "per_page=&page=&ids=&session_ids=&statuses=&created_before=&created_after=" +
          "&updated_before=&updated_after=",
        ],
      ]
    ) {
      const res = await t.fetch(`${path}?${query}`);
      assert.equal(res.status, 200, `${path}?${query}: ${await res.clone().text()}`);
      assert.deepEqual(await res.json(), await (await t.fetch(path)).json(), path);
    }
    // A repeated parameter's empty values are no values: the other one counts.
    const one = await (await t.fetch("/v1/sessions?per_page=1&per_page=")).json();
    assert.equal(one.count, 1);
  });
});

Deno.test("validation: bounds and empty values in process", async (tt) => {
  const rule = async (schema: z.ZodType, value: unknown) => {
    const body = await assertError(() => validate(schema, value), 422000);
    assert.equal(body.fields!.length, 1, JSON.stringify(body));
    return body.fields![0].errors;
  };
  await tt.step("a non-integer's exclusive bound stays exclusive, said so", async () => {
    assert.deepEqual(await rule(z.number().positive().max(2), 0), [{
      code: "range",
      message: "must be greater than 0 and at most 2",
      params: { exclusive_min: 0, max: 2 },
    }]);
    assert.deepEqual(await rule(z.number().min(0).lt(1), 1), [{
      code: "range",
      message: "must be at least 0 and less than 1",
      params: { min: 0, exclusive_max: 1 },
    }]);
    assert.deepEqual(await rule(z.number().int().gt(0).lt(10), 10), [{
      code: "range",
      message: "must be an integer from 1 to 9",
      params: { min: 1, max: 9 },
    }]);
  });
  await tt.step("an empty required query parameter is `required`", async () => {
    const query = z.preprocess(withoutEmptyValues, z.object({ q: z.string() }));
    assert.deepEqual(await rule(query, { q: "" }), [{ code: "required", message: "is required" }]);
  });
});

/** One bad request the table expects a rule for. */
interface Case {
  /** `METHOD /path` of the operation. */
  op: string;
  field: string;
  rule: string;
  /** The exact params (undefined: none), or `"any"` when the table cannot know them. */
  params?: Json | "any";
  send: () => Promise<Response>;
  /** The operation answers errors in A2A's shape (field violations, no rule codes). */
  a2a: boolean;
}

/** Follows `$ref`s to the schema (`#/components/schemas/X`). */
function deref(doc: Json, schema: unknown): Json | undefined {
  let s = schema as Json | undefined;
  while (s && typeof s.$ref === "string") {
    s = (s.$ref as string).slice(2).split("/").reduce<unknown>(
      (here, key) => (here as Json)?.[key],
      doc,
    ) as Json | undefined;
  }
  return s;
}

/** The schema of a value without its `null` option; undefined for a union of several types. */
function plain(doc: Json, schema: unknown): Json | undefined {
  const s = deref(doc, schema);
  if (!s) return undefined;
  if (Array.isArray(s.anyOf)) {
    const options = (s.anyOf as Json[]).filter((o) => o.type !== "null");
    return options.length === 1 ? plain(doc, options[0]) : undefined;
  }
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== "null");
    return types.length === 1 ? { ...s, type: types[0] } : undefined;
  }
  return s;
}

/** The bounds a `range` rule must state for a number schema: inclusive, exclusive only if not. */
function rangeParams(s: Json): Json {
  const integer = s.type === "integer";
  const exMin = s.exclusiveMinimum as number | undefined;
  const exMax = s.exclusiveMaximum as number | undefined;
  return Object.fromEntries(
    Object.entries({
      min: s.minimum ?? (integer && exMin !== undefined ? exMin + 1 : undefined),
      max: s.maximum ?? (integer && exMax !== undefined ? exMax - 1 : undefined),
      exclusive_min: integer ? undefined : exMin,
      exclusive_max: integer ? undefined : exMax,
    }).filter(([, v]) => v !== undefined),
  );
}

/** A bad value per rule of one scalar schema: `[rule, value, params]`. */
function scalarCases(s: Json, text: boolean): [string, unknown, Json | undefined][] {
  const out: [string, unknown, Json | undefined][] = [];
  const type = s.type as string;
  const expected = { expected: type };
  if (type === "integer" || type === "number") {
    out.push(["type", text ? "x" : "1", expected]);
    if (type === "integer") out.push(["type", 1.5, expected]);
    const bounds = rangeParams(s);
    const low = bounds.min !== undefined ? Number(bounds.min) - 1 : bounds.exclusive_min;
    const high = bounds.max !== undefined ? Number(bounds.max) + 1 : bounds.exclusive_max;
    if (low !== undefined) out.push(["range", low, bounds]);
    if (high !== undefined) out.push(["range", high, bounds]);
  } else if (type === "boolean") {
    out.push(["type", "x", expected]);
  } else if (type === "string") {
    if (!text) out.push(["type", 5, expected]);
    const allowed = s.enum ?? (s.const !== undefined ? [s.const] : undefined);
    if (allowed) out.push(["enum", "zz-none-of-these", { allowed }]);
    const length = Object.fromEntries(
      Object.entries({ min: s.minLength, max: s.maxLength }).filter(([, v]) => v !== undefined),
    );
    if (length.min !== undefined) out.push(["length", "a".repeat(Number(length.min) - 1), length]);
    if (length.max !== undefined) out.push(["length", "a".repeat(Number(length.max) + 1), length]);
    if (s.pattern !== undefined || s.format !== undefined) {
      // Every pattern is named: the 422 says which form it wants.
      assert.equal(typeof s.format, "string", `a pattern without a format: ${JSON.stringify(s)}`);
      out.push(["format", "/".repeat(Math.max(1, Number(length.min ?? 1))), {
        format: s.format,
      }]);
    }
  }
  return out;
}

/** Every case of a JSON body schema, each value placed in an otherwise minimal body by `embed`. */
function bodyCases(
  doc: Json,
  schema: unknown,
  path: string[],
  embed: (value: unknown) => unknown,
): { field: string; rule: string; params?: Json | "any"; body: unknown }[] {
  const s = plain(doc, schema);
  if (!s) return [];
  const field = path.join(".");
  const out: ReturnType<typeof bodyCases> = [];
  const options = Array.isArray(s.oneOf) ? (s.oneOf as unknown[]).map((o) => deref(doc, o)!) : [];
  if (options.length > 0) {
    // A discriminated union: the property every option fixes names no option when it is bogus.
    const first = (options[0].properties ?? {}) as Record<string, Json>;
    const key = Object.keys(first).find((k) =>
      options.every((o) => (o.properties as Record<string, Json>)[k]?.const !== undefined)
    );
    if (key) {
      const allowed = options.map((o) => (o.properties as Record<string, Json>)[key].const);
      out.push({
        field: `${field}.${key}`,
        rule: "enum",
        params: { allowed },
        body: embed({ [key]: "zz-none-of-these" }),
      });
    }
    for (const option of options) out.push(...objectCases(doc, option, path, embed));
    return out;
  }
  if (s.type === "object") {
    if (path.length > 0) {
      out.push({ field, rule: "type", params: { expected: "object" }, body: embed(5) });
    }
    out.push(...objectCases(doc, s, path, embed));
  } else if (s.type === "array") {
    out.push({ field, rule: "type", params: { expected: "array" }, body: embed(5) });
    if (typeof s.minItems === "number" && s.minItems > 0) {
      const params = Object.fromEntries(
        Object.entries({ min: s.minItems, max: s.maxItems }).filter(([, v]) => v !== undefined),
      );
      out.push({ field, rule: "length", params, body: embed([]) });
    }
    out.push(...bodyCases(doc, s.items, [...path, "0"], (v) => embed([v])));
  } else {
    for (const [rule, value, params] of scalarCases(s, false)) {
      out.push({ field, rule, params, body: embed(value) });
    }
  }
  return out;
}

function objectCases(
  doc: Json,
  s: Json,
  path: string[],
  embed: (value: unknown) => unknown,
): ReturnType<typeof bodyCases> {
  const properties = (s.properties ?? {}) as Record<string, Json>;
  const base = Object.fromEntries(
    Object.entries(properties).filter(([, p]) => p.const !== undefined).map(([k, p]) => [
      k,
      p.const,
    ]),
  );
  const at = (key: string) => [...path, key].join(".");
  const out: ReturnType<typeof bodyCases> = [];
  if (s.additionalProperties === false) {
    out.push({
      field: at("zz_unknown"),
      rule: "unknown_field",
      body: embed({ ...base, zz_unknown: 1 }),
    });
  }
  for (const key of (s.required ?? []) as string[]) {
    if (!(key in base)) out.push({ field: at(key), rule: "required", body: embed({ ...base }) });
  }
  for (const [key, p] of Object.entries(properties)) {
    if (key in base) continue;
    out.push(...bodyCases(doc, p, [...path, key], (v) => embed({ ...base, [key]: v })));
  }
  return out;
}

/** The path of an operation with its parameters filled in (`{session_id}` -> `s1`). */
function concrete(path: string): string {
  const values: Record<string, string> = { session_id: "s1", tenant: "default" };
  return path.replace(/\{([^}]+)\}/g, (_, name) => values[name] ?? "zz-absent");
}

/** Every case of every operation of the document. */
function tableCases(t: TestServer, doc: Json): Case[] {
  const cases: Case[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const responses = (op.responses ?? {}) as Json;
      const native = "422" in responses;
      const a2a = !native && "400" in responses && (op.tags as string[])?.includes("A2A");
      if (!native && !a2a) continue;
      const name = `${method.toUpperCase()} ${path}`;
      const url = concrete(path);
      const params = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p)!);
      const query = params.filter((p) => p.in === "query");
      for (const q of query) {
        const s = plain(doc, q.schema);
        const item = s?.type === "array" ? plain(doc, s.items) : s;
        if (!item) continue;
        const field = s?.type === "array" ? `${q.name}.0` : q.name as string;
        for (const [rule, value, expected] of scalarCases(item, true)) {
          const search = new URLSearchParams({ [q.name as string]: String(value) });
          cases.push({
            op: name,
            field,
            rule,
            params: a2a ? "any" : expected,
            send: () => t.fetch(`${url}?${search}`, { method }),
            a2a,
          });
        }
      }
      const content = ((op.requestBody as Json)?.content ?? {}) as Record<string, Json>;
      const schema = content["application/json"]?.schema;
      // Every native endpoint refuses an unknown query parameter, those that take none too.
      if (native && (query.length > 0 || path.startsWith("/v1/"))) {
        cases.push({
          op: name,
          field: "zz_unknown",
          rule: "unknown_field",
          send: () => t.fetch(`${url}?zz_unknown=1`, { method, json: schema ? {} : undefined }),
          a2a,
        });
      }
      for (const c of schema ? bodyCases(doc, schema, [], (v) => v) : []) {
        cases.push({
          op: name,
          field: c.field,
          rule: c.rule,
          params: a2a ? "any" : c.params,
          send: () => t.fetch(url, { method, json: c.body }),
          a2a,
        });
      }
    }
  }
  return cases;
}

/** The rules a response reports for `field`: a native 422's, or an A2A error's violations. */
async function rulesFor(res: Response, field: string, a2a: boolean): Promise<Json[]> {
  const text = await res.text();
  if (a2a) {
    assert.equal(res.status, 400, text);
    const details = (JSON.parse(text).error.details ?? []) as Json[];
    const violations = details.flatMap((d) => (d.fieldViolations ?? []) as Json[]);
    return violations.filter((v) => v.field === field).map((v) => ({ message: v.description }));
  }
  assert.equal(res.status, 422, text);
  const body = JSON.parse(text) as ErrorBody;
  return (body.fields ?? []).filter((f) => f.field === field).flatMap((f) => f.errors) as Json[];
}

Deno.test("validation: every field of every route, one bad value per rule", async (tt) => {
  await using t = await startTestServer({
    manifest: { http_server: { protocol: { ag_ui: {}, a2a: {} } } },
  });
  await (await t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s1" } })).body
    ?.cancel();
  const doc = await (await t.fetch("/v1/openapi.json")).json() as Json;
  const cases = tableCases(t, doc);

  await tt.step("the table reaches every kind of rule on every kind of route", () => {
    const reached = new Set(cases.map((c) => c.rule));
    for (const rule of ["required", "type", "range", "length", "format", "enum", "unknown_field"]) {
      assert.ok(reached.has(rule), `no case of ${rule}`);
    }
    const ops = new Set(cases.map((c) => c.op));
    for (
      const op of [
        "POST /v1/sessions",
        "GET /v1/sessions",
        "POST /v1/sessions/{session_id}/messages",
        "GET /v1/sessions/{session_id}/runs",
        "POST /v1/runs",
        "POST /v1/runs/start",
        "POST /ag-ui/run",
        "POST /a2a/message:send",
        "GET /a2a/tasks",
      ]
    ) assert.ok(ops.has(op), `no case for ${op}`);
    assert.ok(cases.length > 200, `only ${cases.length} cases`);
  });

  await tt.step(
    `${cases.length} cases: one error of the right rule, params and words`,
    async () => {
      const failures: string[] = [];
      for (const c of cases) {
        const where = `${c.op} ${c.field} (${c.rule})`;
        try {
          const rules = await rulesFor(await c.send(), c.field, c.a2a);
          assert.equal(rules.length, 1, `one error for the field: ${JSON.stringify(rules)}`);
          const [rule] = rules;
          assertOurWords(rule.message, where);
          if (c.a2a) continue;
          assert.equal(rule.code, c.rule, JSON.stringify(rule));
          const keys = Object.keys((rule.params ?? {}) as Json);
          assert.ok(keys.every((k) => RULE_PARAMS[c.rule].includes(k)), JSON.stringify(rule));
          if (c.params !== "any") assert.deepEqual(rule.params, c.params, JSON.stringify(rule));
        } catch (e) {
          failures.push(`${where}: ${(e as Error).message.split("\n")[0]}`);
        }
      }
      assert.deepEqual(failures, []);
    },
  );

  await tt.step("an empty value of every query parameter is no value", async () => {
    const failures: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item as Record<string, Json>)) {
        const params = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p)!);
        for (const q of params.filter((p) => p.in === "query")) {
          const res = await t.fetch(`${concrete(path)}?${q.name}=`, { method });
          const text = await res.text();
          if (text.includes(`"${q.name}"`) && res.status >= 400) {
            failures.push(`${method.toUpperCase()} ${path}?${q.name}=: ${res.status} ${text}`);
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });
});
