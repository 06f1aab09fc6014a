/**
 * Request parsing that never lets a client mistake become a 500: JSON bodies (content type, size
 * limit, syntax), zod validation mapped onto the spec's validation error shape, and query strings.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { PER_PAGE } from "../../api/schemas.ts";
import { errors, type FieldError, type FieldRuleError } from "../../errors.ts";
import { requestTimedOut } from "./wire.ts";

/** Turns zod issues into the spec's `fields` array, grouped by dotted field path. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], prefix = ""): FieldError[] {
  const byField = new Map<string, FieldRuleError[]>();
  const add = (field: string, rule: FieldRuleError) => {
    const list = byField.get(field) ?? [];
    list.push(rule);
    byField.set(field, list);
  };
  for (const issue of issues) {
    const path = [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        add(path ? `${path}.${key}` : key, { code: "unknown_field", message: "unknown field" });
      }
      continue;
    }
    add(path || "body", ruleOf(issue));
  }
  return [...byField].map(([field, errs]) => ({ field, errors: errs }));
}

function ruleOf(issue: z.core.$ZodIssue): FieldRuleError {
  // Issues are parsed with `reportInput`, so an undefined input means the field is missing.
  if (issue.input === undefined && issue.code !== "custom") {
    return { code: "required", message: "is required" };
  }
  switch (issue.code) {
    case "invalid_type":
      return { code: "type", message: issue.message, params: { expected: issue.expected } };
    case "too_small":
      return issue.origin === "array" || issue.origin === "string"
        ? { code: "length", message: issue.message, params: { min: Number(issue.minimum) } }
        : { code: "range", message: issue.message, params: { min: Number(issue.minimum) } };
    case "too_big":
      return issue.origin === "array" || issue.origin === "string"
        ? { code: "length", message: issue.message, params: { max: Number(issue.maximum) } }
        : { code: "range", message: issue.message, params: { max: Number(issue.maximum) } };
    case "invalid_format":
      return { code: "format", message: issue.message, params: { format: issue.format } };
    case "invalid_value":
      return {
        code: "enum",
        message: issue.message,
        params: { allowed: issue.values.map((v) => (typeof v === "bigint" ? String(v) : v)) },
      };
    case "invalid_union":
      return { code: "type", message: issue.message };
    case "not_multiple_of":
      return { code: "type", message: issue.message };
    default:
      return { code: "invalid", message: issue.message };
  }
}

/** Validates `value` with `schema`; a failure is an ApiError 422 with field paths. */
export function validate<T extends z.ZodType>(schema: T, value: unknown, prefix = ""): z.infer<T> {
  // `reportInput` keeps the offending input on each issue: it tells `required` from `type`.
  const parsed = schema.safeParse(value, { reportInput: true });
  if (!parsed.success) throw errors.validation(fieldErrors(parsed.error.issues, prefix));
  return parsed.data;
}

/** Options of `readJson`. */
export interface ReadJsonOptions {
  /**
   * The body may be absent or empty (then `undefined`), and its content type is not checked (A2A
   * task operations take an optional body their clients send without one).
   */
  optional?: boolean;
}

/**
 * Reads the request body as JSON within `limit` bytes: 415, 413 (declared, or as soon as the bytes
 * read pass the limit: a huge chunked body is refused without being held), 400 for bad JSON, and
 * 499 when the client hangs up mid-body (logged and counted as such, never a 500).
 */
export async function readJson(
  c: Context,
  limit: number,
  options: ReadJsonOptions = {},
): Promise<unknown> {
  const type = c.req.header("content-type") ?? null;
  const mime = type?.split(";")[0].trim().toLowerCase() ?? "";
  if (
    !options.optional && mime !== "application/json" &&
    !/^application\/[a-z0-9.+-]+\+json$/.test(mime)
  ) {
    throw errors.unsupportedMediaType(type);
  }
  const bytes = await readBytes(c, limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw errors.malformedJson("the body is not valid UTF-8");
  }
  if (text.trim() === "") {
    if (options.optional) return undefined;
    throw errors.malformedJson("the body is empty");
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.malformedJson((e as Error).message);
  }
}

/**
 * The request body's bytes, refused (413) as soon as they pass `limit`; 408 when the request
 * timeout cut it, 499 when the client hung up.
 */
async function readBytes(c: Context, limit: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > limit) throw errors.bodyTooLarge(limit);
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch {
      // The only way reading a request body fails: the connection ended before the body did,
      // because the request timeout ended it (408 already sent) or the client hung up.
      throw requestTimedOut(c) ? errors.requestTimeout() : errors.clientClosed();
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw errors.bodyTooLarge(limit);
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** Reads and validates a JSON body in one call. */
export async function readBody<T extends z.ZodType>(
  c: Context,
  schema: T,
  limit: number,
): Promise<z.infer<T>> {
  return validate(schema, await readJson(c, limit));
}

/** Query parameters as a map of name to every value given (repeated or comma-separated). */
export function queryValues(c: Context): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, value] of new URL(c.req.url).searchParams) {
    const list = out.get(key) ?? [];
    list.push(value);
    out.set(key, list);
  }
  return out;
}

/** Rejects query parameters that no endpoint reads, so a typo is a 422, not a silent no-op. */
export function rejectUnknownQuery(query: Map<string, string[]>, known: readonly string[]): void {
  const unknown = [...query.keys()].filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw errors.validation(unknown.map((field) => ({
      field,
      errors: [{ code: "unknown_field", message: `unknown query parameter; known: ${known}` }],
    })));
  }
}

/** One query value (the last when repeated), or undefined. */
export function single(query: Map<string, string[]>, name: string): string | undefined {
  const values = query.get(name);
  return values?.[values.length - 1];
}

/** Parses `per_page` (integer 1..1000, default 100): the spec's `range` rule on failure. */
export function perPage(value: string | undefined): number {
  const { min, max } = PER_PAGE;
  if (value === undefined) return PER_PAGE.default;
  const n = /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw errors.validation([{
      field: "per_page",
      errors: [{
        code: "range",
        message: `must be an integer from ${min} to ${max}`,
        params: { min, max },
      }],
    }]);
  }
  return n;
}
