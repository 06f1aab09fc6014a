/**
 * Request parsing that never lets a client mistake become a 500: JSON bodies (content type, size
 * limit, syntax) and zod validation mapped onto the spec's validation error shape.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { errors, type FieldError, type FieldRuleError } from "../../errors.ts";
import { requestTimedOut } from "./wire.ts";

/** How `fieldErrors` names and words the fields. */
export interface FieldErrorOptions {
  /** Dotted path the issue paths are relative to (a nested value checked on its own). */
  prefix?: string;
  /** The issues are a query string's: an unknown key keeps its schema's message. */
  query?: boolean;
}

/**
 * Turns zod issues into the spec's `fields` array, grouped by dotted field path. Parse with
 * `reportInput`: an issue whose input is absent is a missing field (`required`), not a bad one.
 */
export function fieldErrors(
  issues: readonly z.core.$ZodIssue[],
  options: FieldErrorOptions = {},
): FieldError[] {
  const byField = new Map<string, FieldRuleError[]>();
  const add = (field: string, rule: FieldRuleError) => {
    const list = byField.get(field) ?? [];
    list.push(rule);
    byField.set(field, list);
  };
  for (const issue of issues) {
    const path = [options.prefix ?? "", ...issue.path.map(String)].filter((p) => p !== "")
      .join(".");
    if (issue.code === "unrecognized_keys") {
      const message = options.query ? issue.message : "unknown field";
      for (const key of issue.keys) {
        add(path ? `${path}.${key}` : key, { code: "unknown_field", message });
      }
      continue;
    }
    add(path || "body", ruleOf(issue));
  }
  return [...byField].map(([field, errs]) => ({ field, errors: errs }));
}

function ruleOf(issue: z.core.$ZodIssue): FieldRuleError {
  if (issue.code === "custom") {
    // A custom check names the spec's rule itself (`params.rule`, e.g. `range` for per_page).
    const { rule, ...params } = (issue.params ?? {}) as { rule?: string };
    return rule
      ? { code: rule, message: issue.message, params }
      : { code: "invalid", message: issue.message };
  }
  if (issue.input === undefined) return { code: "required", message: "is required" };
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
  const parsed = schema.safeParse(value, { reportInput: true });
  if (!parsed.success) throw errors.validation(fieldErrors(parsed.error.issues, { prefix }));
  return parsed.data;
}

/**
 * Leaves `text` where Hono's own body readers look first, so a declared route's validator reads
 * the body this module already read (the stream can be read once). Hono types the cache as
 * `Partial<Body>`, but keeps promises of the bodies in it.
 */
export function cacheBodyText(c: Context, text: string): void {
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
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
  cacheBodyText(c, text);
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
