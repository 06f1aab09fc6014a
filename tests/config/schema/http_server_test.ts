/** The `http_server` block's schema (`src/config/schema/http_server.ts`): its cross-field rules. */
import assert from "node:assert/strict";
import type { z } from "zod";
import {
  ApiKeySchema,
  AuthSchema,
  CorsSchema,
  HttpServerSchema,
} from "../../../src/config/schema/http_server.ts";

/** `[dotted path, message]` of each issue; an empty list when the value is valid. */
function issues(result: z.ZodSafeParseResult<unknown>): [string, string][] {
  return result.success ? [] : result.error.issues.map((i) => [i.path.join("."), i.message]);
}

const KEY = "0123456789abcdef";

Deno.test("cors: credentials need explicit origins", () => {
  assert.deepEqual(
    issues(CorsSchema.safeParse({ allow_origins: ["*"], allow_credentials: true })),
    [[
      "allow_credentials",
      'allow_credentials needs explicit origins: browsers refuse credentials with "*"',
    ]],
  );
  assert.deepEqual(
    issues(CorsSchema.safeParse({ allow_origins: ["https://a.example"], allow_credentials: true })),
    [],
  );
});

Deno.test("request_timeout includes the headers, so it may not be below header_timeout", () => {
  assert.deepEqual(
    issues(HttpServerSchema.safeParse({ header_timeout: 5000, request_timeout: 4000 })),
    [[
      "request_timeout",
      "request_timeout must be at least header_timeout (it includes the headers)",
    ]],
  );
  assert.deepEqual(
    issues(HttpServerSchema.safeParse({ header_timeout: 5000, request_timeout: 5000 })),
    [],
  );
});

Deno.test("protocol add-ons: absolute paths with defaults, extensions named by URI", () => {
  const parsed = HttpServerSchema.parse({
    protocol: { ag_ui: {}, a2a: { extension: { "https://e.example/x": {} } } },
  });
  assert.deepEqual(parsed.protocol, {
    ag_ui: { path: "/ag-ui", on_disconnect: "cancel" },
    a2a: { path: "/a2a", extension: { "https://e.example/x": { required: false } } },
  });
  const bad = issues(HttpServerSchema.safeParse({
    protocol: { ag_ui: { path: "ag-ui" }, a2a: { extension: { "not a uri": {} } } },
  }));
  assert.deepEqual(bad.map(([path]) => path), [
    "protocol.ag_ui.path",
    "protocol.a2a.extension.not a uri",
  ]);
  assert.equal(bad[0][1], "must be an absolute URL path");
});

Deno.test("auth: keys are long enough, tenants well formed, and no key given twice", () => {
  assert.deepEqual(issues(ApiKeySchema.safeParse({ key: "short", tenant: "-bad" })), [
    ["key", "an API key must be at least 16 characters"],
    [
      "tenant",
      "must start with a letter or digit and hold only letters, digits, '.', '_', ':' and '-'",
    ],
  ]);
  assert.deepEqual(issues(ApiKeySchema.safeParse({ key: KEY, tenant: "acme:eu-1.a_b" })), []);
  assert.deepEqual(
    issues(AuthSchema.safeParse({ api_keys: [KEY], api_key: { a: { key: KEY } } })),
    [["", "the same API key is configured more than once"]],
  );
  const [[, none]] = issues(AuthSchema.safeParse({}));
  assert.match(none, /^the auth block names no API key/);
});
