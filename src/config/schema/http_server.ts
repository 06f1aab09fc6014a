/**
 * The `http_server` block: listener limits, CORS, API keys and the protocol add-ons (`ag_ui`,
 * `a2a`, `ai_sdk`); the native API exists only when the block is present.
 */
import { z } from "zod";

/** A protocol add-on block (`ag_ui {}` / `a2a {}` / `ai_sdk {}`). */
const protocolBlock = (defaultPath: string) =>
  z.object({
    path: z.string().regex(/^\/[A-Za-z0-9_\-./]*$/, "must be an absolute URL path").default(
      defaultPath,
    ),
  }).strict();

/**
 * An A2A extension the agent supports (`extension "https://..." { ... }` in `a2a {}`), declared in
 * the Agent Card. agentd interprets none itself: declaring one says the agent follows it.
 */
export const A2aExtensionSchema = z.object({
  description: z.string().optional(),
  /** A client that does not activate it is refused (ExtensionSupportRequiredError). */
  required: z.boolean().default(false),
  /** Extension-specific parameters, shown in the card. */
  params: z.record(z.string(), z.unknown()).optional(),
}).strict();

/** The `a2a {}` block: the base path and the extensions the card declares (keyed by URI). */
const A2aBlockSchema = protocolBlock("/a2a").extend({
  extension: z.record(z.string().url("an extension is named by its URI"), A2aExtensionSchema)
    .default({}),
}).strict();

const API_KEY = z.string().min(16, "an API key must be at least 16 characters");

/** A named API key (`api_key "name" { key = "...", tenant = "..." }`). */
export const ApiKeySchema = z.object({
  key: API_KEY,
  /** The tenant the key is bound to: it decides the tenant, `X-Tenant-ID` may only repeat it. */
  tenant: z.string().min(1).max(128).regex(
    /^[A-Za-z0-9][A-Za-z0-9._:\-]*$/,
    "must start with a letter or digit and hold only letters, digits, '.', '_', ':' and '-'",
  ).optional(),
}).strict();

/**
 * API keys (`http_server { auth { ... } }`, docs/auth.md): when the block is present every
 * request but the public ones needs one of its keys.
 */
export const AuthSchema = z.object({
  /** Keys bound to no tenant (`AGENT__AUTH__API_KEYS` replaces this list). */
  api_keys: z.array(API_KEY).default([]),
  /** Named keys, optionally bound to a tenant; the name (never the key) is logged. */
  api_key: z.record(z.string(), ApiKeySchema).default({}),
  /** Whether `/docs` and `/v1/openapi.json` are served without a key. */
  public_docs: z.boolean().default(true),
}).strict().superRefine((auth, ctx) => {
  const keys = [...auth.api_keys, ...Object.values(auth.api_key).map((k) => k.key)];
  if (keys.length === 0) {
    ctx.addIssue({
      code: "custom",
      message: "the auth block names no API key (add api_keys, an api_key block or set " +
        "AGENT__AUTH__API_KEYS; remove the block to serve without keys)",
    });
  } else if (new Set(keys).size !== keys.length) {
    // Never name the key itself: this message is printed.
    ctx.addIssue({ code: "custom", message: "the same API key is configured more than once" });
  }
});

/**
 * What closing the response of an attached run does: `cancel` the run (the spec's rule) or let it
 * `continue`, so a client can reload and resume its stream by cursor.
 */
export const OnDisconnectSchema = z.enum(["cancel", "continue"]);

/** The AG-UI add-on block (`ag_ui {}`). */
const AgUiBlockSchema = protocolBlock("/ag-ui").extend({
  /** Default of `forwardedProps.on_disconnect` for AG-UI runs. */
  on_disconnect: OnDisconnectSchema.default("cancel"),
});

/** The AI SDK add-on block (`ai_sdk {}`). */
const AiSdkBlockSchema = protocolBlock("/ai-sdk").extend({
  /**
   * What closing a chat response does when the request does not say: `continue` by default, so
   * `useChat({ resume: true })` picks the answer up after a reload.
   */
  on_disconnect: OnDisconnectSchema.default("continue"),
});

/**
 * Cross-origin requests (`http_server { cors { ... } }`): off without the block. Browsers on the
 * listed origins may call every route (native, AG-UI, A2A, AI SDK); preflights are answered.
 */
export const CorsSchema = z.object({
  /** Origins allowed (`https://app.example.com`), or `["*"]` for any. */
  allow_origins: z.array(z.string().min(1)).min(1),
  /** Request headers allowed besides the defaults (content-type, x-tenant-id, authorization, ...). */
  allow_headers: z.array(z.string().min(1)).default([]),
  /** Response headers exposed besides the defaults (x-request-id, location, x-run-id, ...). */
  expose_headers: z.array(z.string().min(1)).default([]),
  /** Whether credentials (cookies, HTTP auth) may be sent; never with `["*"]`. */
  allow_credentials: z.boolean().default(false),
  /** Seconds a browser may cache a preflight answer. */
  max_age: z.number().int().min(0).max(86_400).default(600),
}).strict().refine((c) => !(c.allow_credentials && c.allow_origins.includes("*")), {
  message: 'allow_credentials needs explicit origins: browsers refuse credentials with "*"',
  path: ["allow_credentials"],
});

/** The http_server block; the native API exists only when it is present. */
export const HttpServerSchema = z.object({
  host: z.string().default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8080),
  /** Milliseconds between SSE keep-alive comments. */
  keepalive: z.number().int().positive().default(15_000),
  max_body_bytes: z.number().int().positive().default(1_048_576),
  /**
   * Milliseconds a client has to send a request's headers, from the connection's start (or the
   * first byte of a later request on it); the connection is answered 408 and closed after.
   */
  header_timeout: z.number().int().positive().max(3_600_000).default(15_000),
  /**
   * Milliseconds a client has to send a whole request, headers and body (the body timeout);
   * answered 408 and closed after. Never cuts a response, however long it streams.
   */
  request_timeout: z.number().int().positive().max(3_600_000).default(60_000),
  /** Milliseconds a keep-alive connection may stay idle between requests before it is closed. */
  idle_timeout: z.number().int().positive().max(3_600_000).default(65_000),
  /** Connections open at once; one more is answered 503 (`Retry-After`) and closed. */
  max_connections: z.number().int().positive().max(1_000_000).default(4_096),
  /** Public base URL (for the A2A agent card); taken from the request when unset. */
  public_url: z.string().url().optional(),
  /** Default of a native run request's `on_disconnect` (`POST /v1/runs`). */
  on_disconnect: OnDisconnectSchema.default("cancel"),
  /** Cross-origin requests; off without the block. */
  cors: CorsSchema.optional(),
  protocol: z.object({
    ag_ui: AgUiBlockSchema.optional(),
    a2a: A2aBlockSchema.optional(),
    ai_sdk: AiSdkBlockSchema.optional(),
  }).strict().prefault({}),
  /** API keys; without this block the server needs none. */
  auth: AuthSchema.optional(),
}).strict().refine((h) => h.request_timeout >= h.header_timeout, {
  message: "request_timeout must be at least header_timeout (it includes the headers)",
  path: ["request_timeout"],
});

/** Validated API key settings. */
export type AuthConfig = z.infer<typeof AuthSchema>;
/** Validated cross-origin settings (`http_server { cors { ... } }`). */
export type CorsConfig = z.infer<typeof CorsSchema>;
/** What closing an attached run's response does. */
export type OnDisconnect = z.infer<typeof OnDisconnectSchema>;
