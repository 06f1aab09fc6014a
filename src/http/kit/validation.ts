/**
 * Request parsing that never lets a client mistake become a 500: JSON bodies (content type, size
 * limit, syntax), query strings (empty values), and zod validation mapped onto the spec's
 * validation error shape (`src/api/validation.ts`).
 */
import type { Context } from "hono";
import { errors } from "../../errors.ts";
import { requestTimedOut } from "./wire.ts";

export { fieldErrors, parseInput, validate } from "../../api/validation.ts";

/**
 * A query string's values as the routes read them: an empty value (`?per_page=`) is no value, so
 * a parameter given only empty is absent (its default, or `required` when it has none). The one
 * rule for every query parameter of every route (docs/api.md).
 */
export function withoutEmptyValues(query: unknown): unknown {
  if (query === null || typeof query !== "object") return query;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    const values = (Array.isArray(value) ? value : [value]).filter((v) => v !== "");
    if (values.length > 0) out[name] = Array.isArray(value) ? values : values[0];
  }
  return out;
}

/** One query parameter of a route that reads the query itself, by the same rule. */
export function queryParam(c: Context, name: string): string | undefined {
  return c.req.query(name) || undefined;
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
