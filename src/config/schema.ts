/**
 * The manifest schema: one zod schema that validates a normalized manifest (HCL or JSON) and
 * gives the typed configuration the rest of the program reads.
 *
 * Normalized form: single blocks (`agent`, `runtime`, `http_server`, ...) are objects; labelled
 * blocks (`capability "name"`, `tool "name"`, `mcp_server "name"`) are records keyed by label.
 */
import { z } from "zod";

/** Inference parameters of the spec's InferenceParams type; every field optional. */
export const InferenceParamsSchema = z.object({
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  frequency_penalty: z.number().nullish(),
  presence_penalty: z.number().nullish(),
  seed: z.number().int().nullish(),
  provider_params: z.record(z.string(), z.unknown()).nullish(),
}).strict().meta({ id: "InferenceParams" });

/** Retry policy for establishing the model response stream (spec: ModelConfigRetry). */
export const RetrySchema = z.object({
  max_attempts: z.number().int().min(1).max(100),
  initial_backoff: z.number().int().min(0).max(600_000),
  max_backoff: z.number().int().min(0).max(3_600_000),
}).strict().refine((r) => r.max_backoff >= r.initial_backoff, {
  message: "max_backoff must be at least initial_backoff",
  path: ["max_backoff"],
}).meta({ id: "ModelConfigRetry" });

/** The agent's model block. */
export const ModelBlockSchema = z.object({
  provider: z.string().min(1).default("echo"),
  model: z.string().min(1).optional(),
  base_url: z.string().url().optional(),
  api_key: z.string().optional(),
  inference_params: InferenceParamsSchema.optional(),
  /** Milliseconds allowed to establish the response stream. */
  timeout: z.number().int().positive().optional(),
  retry: RetrySchema.optional(),
  /** Models a run's override may choose; any when omitted. */
  models: z.array(z.string().min(1)).optional(),
}).strict();

/** A named set of tools with optional extra instructions. */
export const CapabilitySchema = z.object({
  description: z.string().optional(),
  instructions: z.string().optional(),
  /** Tool names: `tool` blocks, MCP tools (`SERVER__TOOL`), or `mcp_server` names (all its tools). */
  tools: z.array(z.string()).default([]),
}).strict();

/** What a tool may reach (files, network, environment variables); nothing by default. */
export const ToolPermissionsSchema = z.object({
  net: z.union([z.boolean(), z.array(z.string())]).default(false),
  read: z.union([z.boolean(), z.array(z.string())]).default(false),
  write: z.union([z.boolean(), z.array(z.string())]).default(false),
  env: z.union([z.boolean(), z.array(z.string())]).default(false),
}).strict();

/**
 * What one call of a tool may use (docs/tools.md#limits). Exceeding one fails the call with an
 * error naming the limit; the server and other calls go on.
 */
export const ToolLimitsSchema = z.object({
  /**
   * MiB. JavaScript: the V8 heap of the tool's process, and the process's data segment beyond
   * Deno's own reservation; Python: the process's data segment (heap and buffers).
   */
  memory: z.number().int().min(32).max(65_536).default(256),
  /** Bytes of the result's JSON text. */
  result_bytes: z.number().int().min(1).max(268_435_456).default(1_048_576),
  /** Live events (`emit`) per call. */
  emits: z.number().int().min(0).max(1_000_000).default(1_000),
  /** Bytes of all live events' JSON values of one call together. */
  emit_bytes: z.number().int().min(0).max(268_435_456).default(1_048_576),
  /** Python: processes and threads the tool may run at once (sandboxed tools only). */
  processes: z.number().int().min(1).max(4_096).default(32),
}).strict();

/** A server-side tool: a JavaScript/TypeScript module or a Python function. */
export const ToolSchema = z.object({
  description: z.string().default(""),
  kind: z.enum(["javascript", "python"]),
  /** Path of the module, relative to the manifest file. */
  module: z.string().min(1),
  /** Exported function name (JavaScript: default export when omitted; Python: required). */
  function: z.string().optional(),
  /** JSON Schema of the tool's arguments. */
  parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
  /** Per-call timeout in milliseconds. */
  timeout: z.number().int().positive().default(30_000),
  requires_approval: z.boolean().default(false),
  permissions: ToolPermissionsSchema.prefault({}),
  limits: ToolLimitsSchema.prefault({}),
  /**
   * Python: `"none"` runs the tool without the OS sandbox (as the server's user, with its file
   * access); `check` warns about it. JavaScript tools always run in their Deno sandbox.
   */
  sandbox: z.literal("none").optional(),
}).strict();

/**
 * Names an `mcp_server` block may have: a letter, then letters and digits in groups joined by
 * single `-` or `_`, at most 32 characters. No `__` and no trailing `_`, so the `__` that joins a
 * server name to its tools' names (`NAME__TOOL`) is always the first one (docs/tools.md).
 */
export const MCP_SERVER_NAME = /^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$/;

/** The longest `mcp_server` name, so `NAME__` leaves room for tool names under 64 characters. */
export const MCP_SERVER_NAME_MAX = 32;

/**
 * An MCP server whose tools the agent may call (docs/tools.md#mcp-servers): a local program
 * spoken to over stdio (`command`), or a Streamable HTTP endpoint (`url`).
 */
export const McpServerSchema = z.object({
  description: z.string().optional(),
  /** stdio: the program and its arguments; a path starting with `./` or `../` is relative to the manifest. */
  command: z.array(z.string().min(1)).min(1).optional(),
  /** stdio: environment variables of the process, on top of a small base set (PATH, HOME...). */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a variable name"), z.string())
    .optional(),
  /** stdio: working directory, relative to the manifest; the manifest's directory by default. */
  cwd: z.string().min(1).optional(),
  /** Streamable HTTP: the server's MCP endpoint (`http://` or `https://`). */
  url: z.string().url().regex(/^https?:\/\//i, "must be an http:// or https:// URL").optional(),
  /** Streamable HTTP: headers sent with every request (credentials...). */
  headers: z.record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name"),
    z.string(),
  ).optional(),
  /** Streamable HTTP: a header that carries the caller's tenant id on every tool call (opt-in). */
  tenant_header: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name")
    .optional(),
  /** The server's tools the agent may use (their MCP names); all of them when omitted. */
  tools: z.array(z.string().min(1)).optional(),
  /** Milliseconds allowed for one call (and for connecting and listing the tools). */
  timeout: z.number().int().positive().default(30_000),
}).strict().superRefine((server, ctx) => {
  const stdio = server.command !== undefined;
  const http = server.url !== undefined;
  if (stdio === http) {
    ctx.addIssue({
      code: "custom",
      message: 'give either command = [...] (a stdio server) or url = "..." (Streamable HTTP)',
    });
  }
  const misplaced = stdio
    ? (["headers", "tenant_header"] as const).filter((k) => server[k] !== undefined)
    : http
    ? (["env", "cwd"] as const).filter((k) => server[k] !== undefined)
    : [];
  for (const key of misplaced) {
    ctx.addIssue({
      code: "custom",
      path: [key],
      message: stdio
        ? `${key} applies to Streamable HTTP servers (url), not to stdio servers (command)`
        : `${key} applies to stdio servers (command), not to Streamable HTTP servers (url)`,
    });
  }
});

/** The agent block. */
export const AgentSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  version: z.string().default("0.1.0"),
  instructions: z.string().default(""),
  model: ModelBlockSchema.prefault({}),
  /** Names of the capabilities the agent has by default. */
  capabilities: z.array(z.string()).default([]),
  max_steps: z.number().int().min(1).max(10_000).default(25),
}).strict();

/** Where runs, sessions, messages and checkpoints are stored. */
export const StorageSchema = z.object({
  kind: z.enum(["sqlite", "postgres"]).optional(),
  /** SQLite file path (relative to the manifest) or `:memory:`. */
  path: z.string().optional(),
  /** PostgreSQL URL (`postgres://...`); selects the postgres store. */
  url: z.string().optional(),
  /** PostgreSQL schema to use (created when missing). */
  schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
  /**
   * Milliseconds any store call may take (connecting, waiting for a lock, the query); past it
   * the call fails as unavailable (503 with `Retry-After` to clients) instead of waiting on.
   */
  timeout: z.number().int().positive().max(600_000).default(5_000),
}).strict();

/** Live event transport for re-attach streams (spec: AGENT__PUBSUB__*). */
export const PubSubSchema = z.object({
  kind: z.enum(["memory", "redis"]).default("memory"),
  capacity: z.number().int().min(1).max(10_000_000).default(4096),
  url: z.string().optional(),
  token: z.string().optional(),
  /** Prefix of every channel name, so several deployments can share one Redis. */
  prefix: z.string().default("agentd"),
  /**
   * Milliseconds a run's events are kept for replay after the run ends (in memory for `memory`,
   * in a Redis Stream per run for `redis`); 0 keeps none, so no stream can be resumed.
   */
  retention: z.number().int().min(0).max(7 * 86_400_000).default(600_000),
  /** Events kept per run for replay; the oldest are trimmed first. */
  retention_max_events: z.number().int().min(1).max(1_000_000).default(10_000),
  /** `memory` only: characters of retained events kept in the process, over all runs. */
  retention_max_bytes: z.number().int().min(1024).max(2 ** 40).default(64 * 1024 * 1024),
}).strict();

/** Replica liveness and shutdown settings. */
export const ReplicaSchema = z.object({
  /** This process's replica id, recorded as the owner of its runs (random when unset). */
  id: z.string().min(1).max(128).optional(),
  /** Milliseconds between heartbeats of the runs a replica owns. */
  heartbeat_interval: z.number().int().positive().default(2_000),
  /** Milliseconds without heartbeat after which another replica interrupts a run. */
  lease: z.number().int().positive().default(15_000),
  /** Milliseconds between polls of the database for cancellations and lost runs. */
  poll_interval: z.number().int().positive().default(500),
  /** Milliseconds running runs get to finish on SIGTERM/SIGINT before they are interrupted. */
  shutdown_grace: z.number().int().min(0).default(10_000),
}).strict();

/** How an attached run stream treats a client that reads slower than the run produces. */
export const AttachedSchema = z.object({
  /** Events the stream holds for its client before the run waits for it. */
  buffer: z.number().int().min(1).max(1_000_000).default(1024),
  /** Milliseconds the run waits for a full stream to drain before the client is dropped. */
  drain_timeout: z.number().int().positive().default(10_000),
}).strict();

/** Server-wide bounds on tool calls (docs/tools.md#how-many-at-once). */
export const ToolsRuntimeSchema = z.object({
  /**
   * JavaScript and Python calls running at once, over all tools (each in a process of its own);
   * more wait for a slot, at most their tool's `timeout`.
   */
  max_processes: z.number().int().min(1).max(10_000).default(16),
}).strict();

/** The runtime block. */
export const RuntimeSchema = z.object({
  default_tenant_id: z.string().min(1).max(128).default("default"),
  storage: StorageSchema.prefault({}),
  pubsub: PubSubSchema.prefault({}),
  replica: ReplicaSchema.prefault({}),
  attached: AttachedSchema.prefault({}),
  tools: ToolsRuntimeSchema.prefault({}),
  log_level: z.enum(["debug", "info", "warn", "error"]).default("info"),
}).strict();

/** A protocol add-on block (`ag_ui {}` / `a2a {}`). */
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

/**
 * Cross-origin requests (`http_server { cors { ... } }`): off without the block. Browsers on the
 * listed origins may call every route (native, AG-UI, A2A); preflights are answered.
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
  }).strict().prefault({}),
  /** API keys; without this block the server needs none. */
  auth: AuthSchema.optional(),
}).strict().refine((h) => h.request_timeout >= h.header_timeout, {
  message: "request_timeout must be at least header_timeout (it includes the headers)",
  path: ["request_timeout"],
});

/** The whole manifest. */
export const ManifestSchema = z.object({
  agent: AgentSchema,
  capability: z.record(z.string(), CapabilitySchema).default({}),
  tool: z.record(z.string(), ToolSchema).default({}),
  mcp_server: z.record(z.string(), McpServerSchema).default({}),
  runtime: RuntimeSchema.prefault({}),
  http_server: HttpServerSchema.optional(),
}).strict().superRefine((manifest, ctx) => {
  // MCP tools are named `SERVER__TOOL`: server names must keep that split unambiguous, and no
  // other tool may take a name in a server's namespace.
  const servers = Object.keys(manifest.mcp_server);
  for (const name of servers) {
    if (!MCP_SERVER_NAME.test(name) || name.length > MCP_SERVER_NAME_MAX) {
      ctx.addIssue({
        code: "custom",
        path: ["mcp_server", name],
        message: `the name must start with a letter and hold letters and digits, joined by ` +
          `single '-' or '_' (no '__', no trailing '_'), at most ${MCP_SERVER_NAME_MAX} characters`,
      });
    }
  }
  for (const tool of Object.keys(manifest.tool)) {
    const server = servers.find((s) => tool === s || tool.startsWith(`${s}__`));
    if (server !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["tool", tool],
        message: `the name is taken by mcp_server "${server}" (it names the server, and ` +
          `${server}__* its tools); rename the tool or the server`,
      });
    }
  }
});

/** Validated manifest. */
export type Manifest = z.infer<typeof ManifestSchema>;
/** The agent's model block, validated. */
export type ModelBlock = z.infer<typeof ModelBlockSchema>;
/** A validated tool definition. */
export type ToolConfig = z.infer<typeof ToolSchema>;
/** A validated `mcp_server` block. */
export type McpServerConfig = z.infer<typeof McpServerSchema>;
/** A tool's validated limits. */
export type ToolLimits = z.infer<typeof ToolLimitsSchema>;
/** Validated inference parameters. */
export type InferenceParams = z.infer<typeof InferenceParamsSchema>;
/** Validated retry policy. */
export type RetryConfig = z.infer<typeof RetrySchema>;
/** Validated API key settings. */
export type AuthConfig = z.infer<typeof AuthSchema>;
/** Validated cross-origin settings (`http_server { cors { ... } }`). */
export type CorsConfig = z.infer<typeof CorsSchema>;
/** What closing an attached run's response does. */
export type OnDisconnect = z.infer<typeof OnDisconnectSchema>;

/**
 * The configuration the program runs with: the validated manifest plus where it came from
 * (paths in the manifest are relative to `baseDir`).
 */
export interface Config {
  manifest: Manifest;
  /** Absolute directory of the manifest file; relative paths in it resolve from here. */
  baseDir: string;
  /** The manifest file the configuration was loaded from, when there is one. */
  source?: string;
}
