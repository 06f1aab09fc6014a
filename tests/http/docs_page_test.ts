/**
 * The API reference page: `/docs` renders the OpenAPI document as one self-contained HTML page
 * (no script, no external URL, in-page links only) with every operation and schema on it.
 */
import assert from "node:assert/strict";
import { startTestServer } from "../_kit/mod.ts";
import type { Json } from "./openapi_check.ts";

Deno.test("/docs: HTML that references no external URL, every operation and schema", async () => {
  await using t = await startTestServer({
    manifest: { http_server: { protocol: { ag_ui: {}, a2a: {} } } },
  });
  const doc = await (await t.fetch("/v1/openapi.json")).json() as Json;

  const res = await t.fetch("/docs");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  const html = await res.text();
  assert.match(html, /^<!doctype html>/i);
  assert.doesNotMatch(html, /https?:\/\//i, "no absolute URL anywhere");
  assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\(/i, "nothing to load");
  for (const m of html.matchAll(/\b(?:href|src|action)\s*=\s*["']?([^"'\s>]*)/gi)) {
    assert.ok(m[1].startsWith("#"), `only in-page links: ${m[0]}`);
  }
  // Every anchor a link points to exists, and every operation and schema is on the page.
  const ids = new Set([...html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]));
  for (const m of html.matchAll(/href="#([^"]+)"/g)) assert.ok(ids.has(m[1]), m[1]);
  for (const item of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(item)) assert.ok(ids.has(`op-${op.operationId}`));
  }
  for (const name of Object.keys((doc.components as Json).schemas as Json)) {
    assert.ok(ids.has(`schema-${name}`), name);
  }
  assert.match(html, /GET<\/span> <code>\/v1\/sessions\/\{session_id\}\/runs<\/code>/);
});
