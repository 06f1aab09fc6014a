/**
 * The one assertion for the spec's error bodies (docs/errors.md), for an HTTP response and for an
 * error thrown in process (an `ApiError`, or a domain error — `StoreError`, `EngineError`,
 * `RunServiceError`, ... — as the HTTP edge answers it, `apiErrorOf`): the
 * generic `{code, message}` shape (no stack, no SQL) or the validation shape
 * `{code: 422000, fields: [...]}`.
 */
import assert from "node:assert/strict";
import { apiErrorOf } from "../../src/http/kit/mod.ts";

/** What to expect beyond the code. */
export interface ErrorExpectation {
  /** A validation error names this field (dotted path or query parameter). */
  field?: string;
  /** ...with this rule code (`required`, `range`, ...). */
  rule?: string;
  /** In process: the class the thrown error must be (e.g. `EngineError`: no HTTP error there). */
  thrown?: abstract new (...args: never[]) => Error;
}

/** An error body as the spec defines it. */
export interface ErrorBody {
  code: number;
  message?: string;
  fields?: { field: string; errors: { code: string; message?: string; params?: unknown }[] }[];
}

/**
 * Asserts that `target` is the error of `code`: a `Response` (status `code / 1000`, JSON, the
 * spec's body) or a promise or function that rejects with an error the API answers with `code`.
 * Returns the body.
 */
export async function assertError(
  target: Response | Promise<unknown> | (() => unknown),
  code: number,
  expected: ErrorExpectation = {},
): Promise<ErrorBody> {
  if (target instanceof Response) {
    const text = await target.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      assert.fail(`not JSON (status ${target.status}): ${text.slice(0, 200)}`);
    }
    assert.equal(target.status, Math.floor(code / 1000), text);
    assert.match(target.headers.get("content-type") ?? "", /^application\/json/);
    return checkBody(body, code, expected);
  }
  let caught: unknown;
  try {
    await (typeof target === "function" ? target() : target);
  } catch (error) {
    caught = error;
  }
  if (expected.thrown) {
    const name = expected.thrown.name;
    assert.ok(caught instanceof expected.thrown, `expected a ${name} for ${code}, got ${caught}`);
  }
  const answer = apiErrorOf(caught);
  assert.ok(answer, `expected an error the API answers ${code}, got ${caught}`);
  assert.equal(answer.status, Math.floor(code / 1000));
  return checkBody(answer.toBody(), code, expected);
}

function checkBody(value: unknown, code: number, expected: ErrorExpectation): ErrorBody {
  const body = value as ErrorBody;
  const shown = JSON.stringify(body);
  assert.equal(body?.code, code, shown);
  // Exactly one of the two shapes of the spec, nothing more.
  const keys = Object.keys(body).sort();
  assert.deepEqual(keys, code === 422000 ? ["code", "fields"] : ["code", "message"], shown);
  if (code === 422000) {
    assert.ok(Array.isArray(body.fields) && body.fields.length > 0, `no fields: ${shown}`);
    for (const f of body.fields) {
      assert.equal(typeof f.field, "string", shown);
      assert.ok(Array.isArray(f.errors) && f.errors.length > 0, `no rules: ${shown}`);
      for (const rule of f.errors) assert.equal(typeof rule.code, "string", shown);
    }
  } else {
    assert.equal(typeof body.message, "string", shown);
    assert.equal(body.fields, undefined, shown);
    assert.ok(!/at \S+:\d+|SELECT|INSERT|stack/i.test(body.message!), `leaks internals: ${shown}`);
  }
  if (expected.field !== undefined || expected.rule !== undefined) {
    const hit = (body.fields ?? []).some((f) =>
      (expected.field === undefined || f.field === expected.field) &&
      (expected.rule === undefined || f.errors.some((r) => r.code === expected.rule))
    );
    assert.ok(hit, `expected ${expected.field ?? "a field"} ${expected.rule ?? ""} in ${shown}`);
  }
  return body;
}
