/**
 * The built-in playground: one web page at `/` (HTML, a stylesheet, a vanilla JavaScript module
 * and an icon, all embedded as TypeScript strings so `deno compile` needs no extra flag) that lets
 * a person try the agent through the public native API. Every response carries a strict
 * Content-Security-Policy: the page may load and call nothing but its own origin.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { APP_JS } from "./app_js.ts";
import { INDEX_HTML } from "./index_html.ts";
import { STYLE_CSS } from "./style_css.ts";

/** The Content-Security-Policy of every playground response: only 'self', no inline code. */
export const PLAYGROUND_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
  `<rect x="6" y="6" width="20" height="20" rx="4" transform="rotate(45 16 16)" fill="#4f46e5"/>` +
  `</svg>`;

/** One embedded file. */
interface Asset {
  body: string;
  type: string;
  etag: string;
}

/** A short content hash (FNV-1a), enough for an ETag of a few embedded files. */
function etagOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return `"${(hash >>> 0).toString(16)}-${text.length.toString(16)}"`;
}

function asset(body: string, type: string): Asset {
  return { body, type, etag: etagOf(body) };
}

/** The URL paths of the playground and what each serves. */
export const PLAYGROUND_PATHS: Readonly<Record<string, string>> = {
  "/": "text/html; charset=utf-8",
  "/playground/app.js": "text/javascript; charset=utf-8",
  "/playground/style.css": "text/css; charset=utf-8",
  "/playground/favicon.svg": "image/svg+xml",
};

const ASSETS: Record<string, Asset> = {
  "/": asset(INDEX_HTML, PLAYGROUND_PATHS["/"]),
  "/playground/app.js": asset(APP_JS, PLAYGROUND_PATHS["/playground/app.js"]),
  "/playground/style.css": asset(STYLE_CSS, PLAYGROUND_PATHS["/playground/style.css"]),
  "/playground/favicon.svg": asset(FAVICON_SVG, PLAYGROUND_PATHS["/playground/favicon.svg"]),
};

function serve(c: Context<AppEnv>, file: Asset): Response {
  const headers: Record<string, string> = {
    "content-type": file.type,
    "content-security-policy": PLAYGROUND_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // Revalidate every time: a new agentd binary may bring a new page.
    "cache-control": "no-cache",
    etag: file.etag,
  };
  const match = c.req.header("if-none-match");
  if (match && match.split(",").some((tag) => tag.trim() === file.etag)) {
    return c.body(null, 304, headers);
  }
  return c.body(file.body, 200, headers);
}

/** Routes of the playground: `GET /` and its assets under `/playground/`. */
export function playgroundRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  for (const [path, file] of Object.entries(ASSETS)) r.get(path, (c) => serve(c, file));
  return r;
}
