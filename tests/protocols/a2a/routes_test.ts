/**
 * The add-on's routers on a bare Hono app (no store, no runs): the root card router the app mounts
 * at `/` (`rootRoutes`), and the routing of the base router for paths that are no operation.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { AppEnv, AppServices } from "../../../src/http/kit/mod.ts";
import { type Config, ManifestSchema } from "../../../src/config/schema.ts";
import { a2aAddOn } from "../../../src/protocols/a2a/mod.ts";

function app(manifest: Record<string, unknown>, root = true): Hono<AppEnv> {
  const config: Config = { manifest: ManifestSchema.parse(manifest), baseDir: "/" };
  const services = { config, log: { error() {} } } as unknown as AppServices;
  const a = new Hono<AppEnv>();
  a.use("*", async (c, next) => {
    c.set("services", services);
    c.set("tenant", "default");
    await next();
  });
  const addOn = a2aAddOn(config.manifest.http_server!.protocol.a2a!);
  a.route(addOn.basePath, addOn.routes);
  if (root && addOn.rootRoutes) a.route("/", addOn.rootRoutes);
  return a;
}

const manifest = {
  agent: { name: "rooted", version: "9.9.9" },
  http_server: { protocol: { a2a: { path: "/agents/a2a" } } },
};

Deno.test("routes: the root card names the base URL; the base card is the same", async () => {
  const a = app(manifest);
  const root = await a.request("http://agent.test/.well-known/agent-card.json");
  assert.equal(root.status, 200);
  const card = await root.json();
  assert.equal(card.name, "rooted");
  assert.equal(card.version, "9.9.9");
  assert.equal(card.supportedInterfaces[0].url, "http://agent.test/agents/a2a");
  const base = await a.request("http://agent.test/agents/a2a/.well-known/agent-card.json");
  assert.deepEqual(await base.json(), card);
});

Deno.test("routes: no operation here is an A2A 404, another method a 405 with Allow", async () => {
  const a = app(manifest, false);
  const none = await a.request("http://agent.test/agents/a2a/whatever");
  assert.equal(none.status, 404);
  assert.match(none.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal((await none.json()).error.status, "NOT_FOUND");
  const get = await a.request("http://agent.test/agents/a2a/acme/message:stream");
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  const post = await a.request("http://agent.test/agents/a2a/tasks/t1", { method: "POST" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET");
  const action = await a.request("http://agent.test/agents/a2a/tasks/t1:pause", {
    method: "POST",
  });
  assert.equal(action.status, 404);
});

Deno.test("routes: service parameters are checked before anything else", async () => {
  const a = app(manifest, false);
  const version = await a.request("http://agent.test/agents/a2a/tasks/t1", {
    headers: { "A2A-Version": "2.0" },
  });
  assert.equal(version.status, 400);
  assert.equal((await version.json()).error.details[0].reason, "VERSION_NOT_SUPPORTED");
  const query = await a.request("http://agent.test/agents/a2a/tasks/t1?A2A-Version=0.3");
  assert.equal((await query.json()).error.details[0].reason, "VERSION_NOT_SUPPORTED");
});
