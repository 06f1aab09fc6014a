/**
 * The API reference: `GET /v1/openapi.json` (OpenAPI 3.1, generated from the route registry and
 * the zod schemas) and `GET /docs` (the same document as one self-contained HTML page).
 */
import { Hono } from "hono";
import type { AddOn } from "../kit/addon.ts";
import type { AppEnv } from "../kit/env.ts";
import { renderDocsPage } from "../docs_page.ts";
import { buildOpenApiDocument, type Json } from "./document.ts";

export { buildOpenApiDocument, eventComponent, type Json, OPENAPI_VERSION } from "./document.ts";

/**
 * The page may load nothing from anywhere (all of it is inline), so a browser proves it offline.
 */
const DOCS_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** Routes of the reference, mounted at `/`; the document is built once per app, on first use. */
export function docsRoutes(addOns: readonly AddOn[]): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  let doc: Json | undefined;
  let page: string | undefined;
  const documentOf = (c: { get(key: "services"): AppEnv["Variables"]["services"] }) =>
    doc ??= buildOpenApiDocument(c.get("services").config.manifest, addOns);
  r.get("/v1/openapi.json", (c) => c.json(documentOf(c)));
  r.get("/docs", (c) => {
    page ??= renderDocsPage(documentOf(c));
    return c.html(page, 200, { "content-security-policy": DOCS_CSP });
  });
  return r;
}

/** A Hono route path as an OpenAPI path: `/v1/runs/:run_id` -> `/v1/runs/{run_id}`. */
export function openApiPath(routePath: string): string {
  return routePath.split("/").map((seg) =>
    seg.startsWith(":") ? `{${seg.slice(1).replace(/\{.*$/, "").replace(/\?$/, "")}}` : seg
  ).join("/");
}
