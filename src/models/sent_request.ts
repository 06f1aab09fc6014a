/**
 * The model request of a step as the provider received it, for the run's step record
 * (`GET /v1/runs/{id}/steps`): the HTTP request the provider's fetch sent (URL, method, headers,
 * JSON body), or for a provider without HTTP (`echo`) the AI SDK call it received. Credential
 * headers read `****`, every secret value (the configuration's and the key sent) `[redacted]`,
 * and the body is cut to a size limit. Built only when asked for: a run that records no requests
 * pays nothing but a kept reference.
 */
import { boundedText, type SentRequest } from "../api/run_steps.ts";
import type { Scrub } from "../secrets.ts";

/** Headers that carry credentials, by name. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|key|token|secret/i;

/** What the step record keeps of a request. */
export interface Captured {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
}

/** Masks headers: credentials by name, then any secret value left in the others. */
function maskedHeaders(headers: Headers, scrub: Scrub): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = CREDENTIAL_HEADER.test(name) ? "****" : value;
  return scrub(out);
}

/** The AI SDK call as JSON: the signal and headers dropped (no part of what the model reads). */
function callJson(options: unknown): string {
  if (options === null || typeof options !== "object") return JSON.stringify(options ?? null);
  const { abortSignal: _signal, headers: _headers, ...rest } = options as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * The request as the provider received it: `http` when its fetch sent one, else the call its
 * model received; masked by `scrub`, the body cut at `maxBytes`.
 */
export function sentRequest(
  http: Captured | undefined,
  call: unknown,
  scrub: Scrub,
  maxBytes: number,
): SentRequest {
  const text = http
    ? typeof http.body === "string" ? http.body : http.body == null ? "" : String(http.body)
    : callJson(call);
  const bounded = boundedText(scrub(text), maxBytes);
  let body: unknown = bounded.value;
  if (!bounded.truncated && body !== "") {
    try {
      body = JSON.parse(body as string);
    } catch {
      // Not JSON: kept as text.
    }
  }
  return {
    ...(http
      ? {
        url: scrub(http.url),
        method: http.method,
        headers: maskedHeaders(http.headers, scrub),
      }
      : {}),
    body,
    bytes: bounded.bytes,
    truncated: bounded.truncated,
  };
}
