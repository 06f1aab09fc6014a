/**
 * The built-in playground: one web page at `/` that lets a person try the agent through the
 * public native API. Its files (HTML, a stylesheet, an icon and small JavaScript modules) live in
 * `static/` as what they are, so fmt and lint see them, and are imported as text so `deno compile`
 * embeds them. Every response carries a strict Content-Security-Policy: the page may load and
 * call nothing but its own origin.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { AppEnv } from "../kit/mod.ts";
import INDEX_HTML from "./static/index.html" with { type: "text" };
import STYLE_CSS from "./static/style.css" with { type: "text" };
import FAVICON_SVG from "./static/favicon.svg" with { type: "text" };
import AGENT_JS from "./static/agent.js" with { type: "text" };
import API_JS from "./static/api.js" with { type: "text" };
import APP_JS from "./static/app.js" with { type: "text" };
import DOM_JS from "./static/dom.js" with { type: "text" };
import HISTORY_JS from "./static/history.js" with { type: "text" };
import INTERRUPTS_JS from "./static/interrupts.js" with { type: "text" };
import PAGE_JS from "./static/page.js" with { type: "text" };
import PANELS_JS from "./static/panels.js" with { type: "text" };
import PATCH_JS from "./static/patch.js" with { type: "text" };
import RUNS_JS from "./static/runs.js" with { type: "text" };
import RUN_VIEW_JS from "./static/run_view.js" with { type: "text" };
import SESSIONS_JS from "./static/sessions.js" with { type: "text" };
import SETTINGS_JS from "./static/settings.js" with { type: "text" };
import SSE_JS from "./static/sse.js" with { type: "text" };
import STORAGE_JS from "./static/storage.js" with { type: "text" };
import TRANSCRIPT_JS from "./static/transcript.js" with { type: "text" };

/** The Content-Security-Policy of every playground response: only 'self', no inline code. */
export const PLAYGROUND_CSP: string = [
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

/** One embedded file; its ETag is computed when it is first served (not at every start). */
interface Asset {
  body: string;
  type: string;
  etag?: string;
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

const HTML = "text/html; charset=utf-8";
const JS = "text/javascript; charset=utf-8";

/** Each URL path of the playground with its file and content type. */
const FILES: Record<string, [body: string, type: string]> = {
  "/": [INDEX_HTML, HTML],
  "/playground/style.css": [STYLE_CSS, "text/css; charset=utf-8"],
  "/playground/favicon.svg": [FAVICON_SVG, "image/svg+xml"],
  "/playground/app.js": [APP_JS, JS],
  "/playground/agent.js": [AGENT_JS, JS],
  "/playground/api.js": [API_JS, JS],
  "/playground/dom.js": [DOM_JS, JS],
  "/playground/history.js": [HISTORY_JS, JS],
  "/playground/interrupts.js": [INTERRUPTS_JS, JS],
  "/playground/page.js": [PAGE_JS, JS],
  "/playground/panels.js": [PANELS_JS, JS],
  "/playground/patch.js": [PATCH_JS, JS],
  "/playground/runs.js": [RUNS_JS, JS],
  "/playground/run_view.js": [RUN_VIEW_JS, JS],
  "/playground/sessions.js": [SESSIONS_JS, JS],
  "/playground/settings.js": [SETTINGS_JS, JS],
  "/playground/sse.js": [SSE_JS, JS],
  "/playground/storage.js": [STORAGE_JS, JS],
  "/playground/transcript.js": [TRANSCRIPT_JS, JS],
};

/** The URL paths of the playground and what each serves. */
export const PLAYGROUND_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(FILES).map(([path, [, type]]) => [path, type]),
);

function serve(c: Context<AppEnv>, file: Asset): Response {
  // Hashing every file at start took ~35 ms of a cold start's CPU (the loop still interpreted).
  const etag = file.etag ??= etagOf(file.body);
  const headers: Record<string, string> = {
    "content-type": file.type,
    "content-security-policy": PLAYGROUND_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    // Revalidate every time: a new agentd binary may bring a new page.
    "cache-control": "no-cache",
    etag,
  };
  const match = c.req.header("if-none-match");
  if (match && match.split(",").some((tag) => tag.trim() === etag)) {
    return c.body(null, 304, headers);
  }
  return c.body(file.body, 200, headers);
}

/** Routes of the playground: `GET /` and its assets under `/playground/`. */
export function playgroundRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  for (const [path, [body, type]] of Object.entries(FILES)) {
    const file: Asset = { body, type };
    r.get(path, (c) => serve(c, file));
  }
  return r;
}

/** Whether `path` is one of the page's files (not the page itself): logged at debug. */
export function isPlaygroundAsset(path: string): boolean {
  return path !== "/" && Object.hasOwn(FILES, path);
}
