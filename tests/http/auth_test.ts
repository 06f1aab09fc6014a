/**
 * API keys over real HTTP: 401 without a valid key (both header forms), 200 with one, 403 for a
 * tenant-bound key named with another tenant, the bound tenant deciding the data scope, the public
 * routes, and keys never reaching the logs. Plus the pieces: constant-time digest comparison, the
 * header rules, the manifest/env configuration and the A2A card fields.
 */
import assert from "node:assert/strict";
import {
  authScheme,
  isPublic,
  presentedKey,
  publicPaths,
  sha256,
  timingSafeEqual,
} from "../../src/http/kit/auth.ts";
import { protocolAddOns } from "../../src/server.ts";
import { parseConfig } from "../../src/config/load.ts";
import { maskSecrets } from "../../src/config/mask.ts";
import { ManifestSchema } from "../../src/config/schema.ts";
import { assertError, startTestServer } from "../_kit/mod.ts";

const UNBOUND = "unbound-key-0123456789";
const ACME = "acme-key-abcdefghijklmn";
const WRONG = "wrong-key-zyxwvutsrqpo";

const MESSAGES = [{ role: "user", content: [{ type: "text", value: "hi" }] }];

Deno.test("api keys over HTTP", async (tt) => {
  await using t = await startTestServer({
    manifest: {
      http_server: {
        protocol: { a2a: {} },
        auth: { api_keys: [UNBOUND], api_key: { acme: { key: ACME, tenant: "acme" } } },
      },
    },
  });
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const apiKey = (key: string) => ({ "x-api-key": key });
  /** The body of a successful answer with `status`. */
  const ok = async (res: Response, status = 200) => {
    const body = await res.text();
    assert.equal(res.status, status, body);
    return body;
  };
  await tt.step("401 without a key or with a wrong one, in both header forms", async () => {
    const missing = await t.fetch("/v1/sessions");
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="agentd"');
    await assertError(missing, 401001);
    await assertError(await t.fetch("/v1/sessions", { headers: bearer(WRONG) }), 401001);
    await assertError(await t.fetch("/v1/sessions", { headers: apiKey(WRONG) }), 401001);
    // Near misses: a prefix, another scheme, an empty credential.
    await assertError(
      await t.fetch("/v1/sessions", { headers: bearer(UNBOUND.slice(0, -1)) }),
      401001,
    );
    await assertError(
      await t.fetch("/v1/sessions", { headers: { authorization: `Basic ${UNBOUND}` } }),
      401001,
    );
    await assertError(await t.fetch("/v1/sessions", { headers: apiKey("") }), 401001);
    // Refused before anything else looks at the request: no 422, no 404, no run.
    await assertError(await t.fetch("/v1/runs", { method: "POST", json: { bad: true } }), 401001);
    await assertError(await t.fetch("/v1/no-such-route"), 401001);
    // Under the A2A base the refusal speaks the binding: google.rpc.Status on HTTP+JSON...
    const rest = await t.fetch("/a2a/message:send", { method: "POST", json: {} });
    assert.equal(rest.status, 401);
    assert.equal(rest.headers.get("www-authenticate"), 'Bearer realm="agentd"');
    const status = (await rest.json()).error;
    assert.equal(status.status, "UNAUTHENTICATED");
    assert.equal(status.details[0].reason, "AGENTD_401001");
    // ...and a JSON-RPC error (the native code as its code) on JSON-RPC.
    const rpc = await t.fetch("/a2a", {
      method: "POST",
      json: { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } },
    });
    assert.equal(rpc.status, 401);
    const envelope = await rpc.json();
    assert.equal(envelope.jsonrpc, "2.0");
    assert.equal(envelope.id, null);
    assert.equal(envelope.error.code, 401001);
    assert.equal(envelope.error.data[0].reason, "AGENTD_401001");
  });

  await tt.step("200 with a valid key, in both header forms", async () => {
    await ok(await t.fetch("/v1/sessions", { headers: bearer(UNBOUND) }));
    await ok(await t.fetch("/v1/sessions", { headers: apiKey(UNBOUND) }));
    await ok(await t.fetch("/v1/sessions", { headers: { authorization: `bearer  ${ACME}` } }));
    // X-API-Key wins over an Authorization header meant for someone else.
    await ok(await t.fetch("/v1/sessions", { headers: { ...apiKey(UNBOUND), ...bearer(WRONG) } }));
    // Unknown routes answer as usual once authenticated.
    await assertError(await t.fetch("/v1/no-such-route", { headers: bearer(UNBOUND) }), 404005);
  });

  await tt.step("a tenant-bound key refuses another X-Tenant-ID (403)", async () => {
    await assertError(
      await t.fetch("/v1/sessions", { headers: bearer(ACME), tenant: "default" }),
      403001,
    );
    await assertError(
      await t.fetch("/v1/sessions", { headers: apiKey(ACME), tenant: "globex" }),
      403001,
    );
    await ok(await t.fetch("/v1/sessions", { headers: bearer(ACME), tenant: "acme" }));
    // An unbound key keeps the header rules.
    await assertError(
      await t.fetch("/v1/sessions", { headers: bearer(UNBOUND), tenant: "" }),
      400002,
    );
  });

  await tt.step("the bound tenant decides the data scope", async () => {
    // Created with the acme key and no header: it lands in tenant acme.
    await ok(
      await t.fetch("/v1/sessions", {
        method: "POST",
        headers: bearer(ACME),
        json: { session_id: "s-acme" },
      }),
      201,
    );
    await assertError(await t.fetch("/v1/sessions/s-acme", { headers: bearer(UNBOUND) }), 404001);
    await ok(await t.fetch("/v1/sessions/s-acme", { headers: bearer(UNBOUND), tenant: "acme" }));
    // The default tenant's records are invisible to the acme key.
    await ok(
      await t.fetch("/v1/sessions", {
        method: "POST",
        headers: bearer(UNBOUND),
        json: { session_id: "s-default" },
      }),
      201,
    );
    await assertError(await t.fetch("/v1/sessions/s-default", { headers: bearer(ACME) }), 404001);
    const listed = JSON.parse(
      await ok(await t.fetch("/v1/sessions", { headers: bearer(ACME) })),
    );
    assert.deepEqual(listed.items.map((s: { session_id: string }) => s.session_id), ["s-acme"]);
    // A run started with the key belongs to its tenant.
    const started = JSON.parse(
      await ok(
        await t.fetch("/v1/runs/start", {
          method: "POST",
          headers: apiKey(ACME),
          json: { session_id: "s-acme", messages: MESSAGES },
        }),
        202,
      ),
    );
    const run = JSON.parse(
      await ok(await t.fetch(`/v1/runs/${started.run_id}`, { headers: apiKey(ACME) })),
    );
    assert.equal(run.tenant_id, "acme");
    await assertError(
      await t.fetch(`/v1/runs/${started.run_id}`, { headers: apiKey(UNBOUND) }),
      404002,
    );
  });

  await tt.step("health, reference and the agent card stay open", async () => {
    await ok(await t.fetch("/healthz"));
    await ok(await t.fetch("/readyz"));
    await ok(await t.fetch("/docs"));
    await ok(await t.fetch("/v1/openapi.json"));
    const card = JSON.parse(await ok(await t.fetch("/a2a/.well-known/agent-card.json")));
    // The card tells A2A clients how to authenticate.
    assert.deepEqual(card.securitySchemes, authScheme(t.config.manifest)!.securitySchemes);
    assert.equal(card.securityRequirements.length, 2);
    // Open means open only for reading them.
    await assertError(await t.fetch("/healthz", { method: "POST" }), 401001);
    const rpc = await t.fetch("/a2a", {
      method: "POST",
      headers: bearer(ACME),
      tenant: "default",
      json: { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } },
    });
    assert.equal(rpc.status, 403);
    assert.equal((await rpc.json()).error.code, 403001);
    // An invalid X-Tenant-ID under the A2A base: the binding's shape too.
    const bad = await t.fetch("/a2a/tasks/x", { headers: bearer(UNBOUND), tenant: "no spaces" });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.details[0].reason, "AGENTD_400002");
  });

  await tt.step("A2A: a bound key cannot name another tenant in the path or body", async () => {
    const send = (path: string, key: string, tenant?: string) =>
      t.fetch(path, {
        method: "POST",
        headers: apiKey(key),
        json: {
          ...(tenant ? { tenant } : {}),
          message: {
            messageId: crypto.randomUUID(),
            role: "ROLE_USER",
            parts: [{ text: "hi" }],
          },
        },
      });
    const forbidden = async (res: Response) => {
      const body = await res.json();
      assert.equal(res.status, 403, JSON.stringify(body));
    };
    await forbidden(await send("/a2a/globex/message:send", ACME));
    await forbidden(await send("/a2a/message:send", ACME, "globex"));
    const own = await send("/a2a/acme/message:send", ACME);
    const task = (await own.json()).task;
    assert.equal(own.status, 200);
    const run = JSON.parse(
      await ok(await t.fetch(`/v1/runs/${task.id}`, { headers: apiKey(ACME) })),
    );
    assert.equal(run.tenant_id, "acme");
    // An unbound key still names any tenant.
    const other = await send("/a2a/globex/message:send", UNBOUND);
    assert.equal(other.status, 200);
    await other.body?.cancel();
  });

  await tt.step("keys never reach the logs", () => {
    const logs = t.logs.join("\n");
    assert.match(logs, /"msg":"api key rejected"/);
    assert.match(logs, /"status":401/);
    for (const key of [UNBOUND, ACME, WRONG, UNBOUND.slice(0, -1)]) {
      assert.ok(!logs.includes(key), `a key is in the logs: ${key}`);
    }
  });
});

Deno.test("api keys: off without the auth block", async () => {
  await using t = await startTestServer();
  const res = await t.fetch("/v1/sessions");
  assert.equal(res.status, 200);
  await res.body?.cancel();
});

Deno.test("api keys: public_docs = false protects the reference", async () => {
  await using t = await startTestServer({
    manifest: { http_server: { auth: { api_keys: [UNBOUND], public_docs: false } } },
  });
  for (const path of ["/docs", "/v1/openapi.json"]) {
    const res = await t.fetch(path);
    assert.equal(res.status, 401, path);
    await res.body?.cancel();
    const ok = await t.fetch(path, { headers: { "x-api-key": UNBOUND } });
    assert.equal(ok.status, 200, path);
    await ok.body?.cancel();
  }
  const health = await t.fetch("/healthz");
  assert.equal(health.status, 200);
  await health.body?.cancel();
});

Deno.test("api keys: digests compared in constant time", async () => {
  const a = await sha256(UNBOUND);
  assert.equal(a.length, 32);
  assert.ok(timingSafeEqual(a, await sha256(UNBOUND)));
  assert.ok(!timingSafeEqual(a, await sha256(WRONG)));
  assert.ok(!timingSafeEqual(a, a.subarray(1)));
});

Deno.test("api keys: which header presents the key", () => {
  const key = (init: Record<string, string>) => presentedKey(new Headers(init));
  assert.equal(key({ authorization: "Bearer abc" }), "abc");
  assert.equal(key({ authorization: "BEARER   abc  " }), "abc");
  assert.equal(key({ authorization: "Basic abc" }), undefined);
  assert.equal(key({ authorization: "Bearer a b" }), undefined);
  assert.equal(key({ "x-api-key": " xyz " }), "xyz");
  assert.equal(key({ "x-api-key": "xyz", authorization: "Bearer abc" }), "xyz");
  assert.equal(key({}), undefined);
});

Deno.test("api keys: public paths", () => {
  const manifest = ManifestSchema.parse({
    agent: { name: "a" },
    http_server: { protocol: { a2a: { path: "/agents/a2a" } }, auth: { api_keys: [UNBOUND] } },
  });
  const open = publicPaths(manifest, protocolAddOns(manifest).flatMap((a) => a.publicPaths));
  for (const path of ["/healthz", "/readyz", "/", "/docs", "/v1/openapi.json"]) {
    assert.ok(isPublic(open, "GET", path), path);
  }
  assert.ok(isPublic(open, "GET", "/agents/a2a/.well-known/agent-card.json"));
  assert.ok(isPublic(open, "HEAD", "/healthz/"));
  assert.ok(isPublic(open, "GET", "/playground/app.js"));
  assert.ok(isPublic(open, "OPTIONS", "/v1/sessions"));
  for (
    const [method, path] of [
      ["POST", "/healthz"],
      ["GET", "/v1/sessions"],
      ["GET", "/playground/tasks/x"],
      ["GET", "/playground/extendedAgentCard"],
      ["GET", "/a2a/.well-known/agent-card.json"],
    ]
  ) assert.ok(!isPublic(open, method, path), `${method} ${path}`);
});

Deno.test("api keys: manifest and environment configuration, masked by check", async () => {
  const hcl = `
agent { name = "a" }
http_server {
  auth {
    api_key "ci" {
      key    = "\${env.CI_KEY}"
      tenant = "acme"
    }
  }
}`;
  const config = await parseConfig(hcl, {
    filename: "agent.hcl",
    env: { CI_KEY: ACME, AGENT__AUTH__API_KEYS: ` ${UNBOUND}, ${WRONG},` },
  });
  const auth = config.manifest.http_server!.auth!;
  assert.deepEqual(auth.api_keys, [UNBOUND, WRONG]);
  assert.deepEqual(auth.api_key, { ci: { key: ACME, tenant: "acme" } });
  const printed = JSON.stringify(maskSecrets(config));
  for (const key of [UNBOUND, WRONG, ACME]) assert.ok(!printed.includes(key));
  assert.match(printed, /"tenant":"acme"/);

  // The variable alone switches keys on inside an http_server block.
  const fromEnv = await parseConfig(`agent { name = "a" }\nhttp_server {}`, {
    filename: "a.hcl",
    env: { AGENT__AUTH__API_KEYS: UNBOUND },
  });
  assert.deepEqual(fromEnv.manifest.http_server?.auth?.api_keys, [UNBOUND]);

  const refused = async (text: string, pattern: RegExp) => {
    await assert.rejects(parseConfig(text, { filename: "a.hcl", env: {} }), (err: Error) => {
      assert.match(err.message, pattern);
      assert.ok(!err.message.includes("short"), "the key itself is never printed");
      return true;
    });
  };
  await refused(
    `agent { name = "a" }\nhttp_server {\n  auth {}\n}`,
    /http_server\.auth: the auth block names no API key/,
  );
  await refused(
    `agent { name = "a" }\nhttp_server {\n  auth {\n    api_keys = ["short"]\n  }\n}`,
    /http_server\.auth\.api_keys\[0\]: an API key must be at least 16 characters/,
  );
  await refused(
    `agent { name = "a" }\nhttp_server {\n  auth {\n    api_keys = ["${UNBOUND}"]\n` +
      `    api_key "x" {\n      key = "${UNBOUND}"\n    }\n  }\n}`,
    /the same API key is configured more than once/,
  );
});

Deno.test("api keys: the A2A card fields", () => {
  const off = ManifestSchema.parse({ agent: { name: "a" }, http_server: {} });
  assert.equal(authScheme(off), undefined);
  const on = ManifestSchema.parse({
    agent: { name: "a" },
    http_server: { auth: { api_keys: [UNBOUND] } },
  });
  const fields = authScheme(on)!;
  assert.deepEqual(Object.keys(fields.securitySchemes), ["bearer", "apiKey"]);
  assert.equal(fields.securitySchemes.bearer.httpAuthSecurityScheme.scheme, "Bearer");
  assert.deepEqual(fields.securitySchemes.apiKey.apiKeySecurityScheme, {
    location: "header",
    name: "X-API-Key",
    description: "An agentd API key.",
  });
  assert.deepEqual(fields.securityRequirements, [
    { schemes: { bearer: { list: [] } } },
    { schemes: { apiKey: { list: [] } } },
  ]);
  assert.ok(!JSON.stringify(fields).includes(UNBOUND));
});
