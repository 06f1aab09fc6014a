/**
 * Agent Card discovery over HTTP: `GET <base>/.well-known/agent-card.json` (and the same at the
 * host root), cacheable (spec §8.6): `Cache-Control` with a `max-age`, a strong `ETag` of the
 * exact document, `Last-Modified` (when the server built the card: it changes only with the
 * manifest, i.e. on a restart), and `304 Not Modified` for a matching `If-None-Match` (or, without
 * one, an `If-Modified-Since` not older than the card).
 */
import type { Context } from "hono";
import type { AppEnv } from "../../http/kit/mod.ts";
import { agentCard, baseUrl } from "./card.ts";

/** Path of the card under the base (and at the root). */
export const CARD_PATH = "/.well-known/agent-card.json";

/** Seconds a client or cache may reuse the card without asking again. */
export const CARD_MAX_AGE = 300;

/** The card handler; `modified` is when the card's content was last set (server start). */
export function cardHandler(modified: Date): (c: Context<AppEnv>) => Promise<Response> {
  // HTTP dates have second precision: a finer time would never compare equal.
  const lastModified = new Date(Math.floor(modified.getTime() / 1000) * 1000);
  return async (c) => {
    const manifest = c.get("services").config.manifest;
    const card = agentCard(manifest, baseUrl(manifest, c.req.url), c.req.header("x-tenant-id"));
    const body = JSON.stringify(card);
    const headers = {
      "cache-control": `public, max-age=${CARD_MAX_AGE}`,
      etag: await etagOf(body),
      "last-modified": lastModified.toUTCString(),
      // The card names the tenant of the header, and the URL of the origin asked.
      vary: "X-Tenant-ID",
    };
    if (notModified(c, headers.etag, lastModified)) {
      return new Response(null, { status: 304, headers });
    }
    return new Response(body, {
      status: 200,
      headers: { ...headers, "content-type": "application/json" },
    });
  };
}

/** A strong entity tag: the SHA-256 of the document, base64url. */
async function etagOf(body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
  const b64 = btoa(String.fromCharCode(...new Uint8Array(digest)));
  return `"${b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}"`;
}

/**
 * RFC 9110 §13.1: `If-None-Match` (weak comparison, `*` matches) decides when present; otherwise
 * `If-Modified-Since` at or after the card's time means the client has it.
 */
function notModified(c: Context<AppEnv>, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
    return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || opaque(tag) === etag);
  }
  const since = Date.parse(c.req.header("if-modified-since") ?? "");
  return Number.isFinite(since) && since >= lastModified.getTime();
}
