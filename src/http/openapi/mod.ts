/**
 * The API reference: `GET /v1/openapi.json` (OpenAPI 3.1, generated from the app's route
 * declarations) and `GET /docs` (the same document as one self-contained HTML page).
 */
import { z } from "zod";
import { renderDocsPage } from "../docs_page.ts";
import { route, type Routes, routes } from "../kit/mod.ts";
import type { Json } from "./document.ts";

export { buildOpenApiDocument, type Json, OPENAPI_VERSION } from "./document.ts";

/**
 * The page may load nothing from anywhere (all of it is inline), so a browser proves it offline.
 */
const DOCS_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/**
 * Routes of the reference, mounted at `/`. `document` builds the app's document; it is asked once,
 * on first use (when every route is mounted).
 */
export function docsRoutes(document: () => Json): Routes {
  const r = routes();
  let doc: Json | undefined;
  let page: string | undefined;
  route(r, {
    method: "get",
    path: "/v1/openapi.json",
    operationId: "openapi",
    tags: ["Reference"],
    summary: "This OpenAPI 3.1 document",
    responses: {
      200: {
        description: "The OpenAPI 3.1 document of this server.",
        content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  }, (c) => c.json(doc ??= document()));
  route(r, {
    method: "get",
    path: "/docs",
    operationId: "docs",
    tags: ["Reference"],
    summary: "API reference page",
    description: "This document rendered as one self-contained HTML page (works offline).",
    responses: {
      200: {
        description: "An HTML page.",
        content: { "text/html": { schema: { type: "string" } } },
      },
    },
  }, (c) => {
    page ??= renderDocsPage(doc ??= document());
    return c.html(page, 200, { "content-security-policy": DOCS_CSP });
  });
  return r;
}
