/**
 * The types every route of the app shares: the services a route reaches through `c.get("services")`
 * and the per-request values the app's middleware sets (request id, tenant, API key).
 */
import type { Context } from "hono";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../log.ts";
import type { AgentdMetrics } from "../../metrics/mod.ts";
import type { RunService } from "../../runs/service.ts";
import type { Store } from "../../store/mod.ts";
import type { ApiKeyIdentity } from "./auth.ts";

/** What the routes need. */
export interface AppServices {
  /** The server's configuration. */
  config: Config;
  /** Sessions, messages, runs and checkpoints. */
  store: Store;
  /** Starts, cancels, observes and reads runs. */
  runs: RunService;
  /** The server's logger (scrubbed JSON lines). */
  log: Logger;
  /** Prometheus metrics: counted by a middleware and served at `GET /metrics` when given. */
  metrics?: AgentdMetrics;
  /**
   * Whether the listener holds all the connections it may (a new one would be refused): the
   * replica is not ready then, so a load balancer sends new clients elsewhere.
   */
  saturated?: () => boolean;
  /** The MCP servers' tools now, by the names the model sees (`SERVER__TOOL`); none when absent. */
  mcpTools?: () => ReadonlyMap<string, McpToolView>;
}

/** What `GET /v1/agent` shows of an MCP tool. */
export interface McpToolView {
  /** What the tool does, as the model reads it. */
  readonly description: string;
  /** JSON Schema of its arguments. */
  readonly parameters: Record<string, unknown>;
  /** Whether a person approves each call first. */
  readonly requires_approval: boolean;
}

/** Per-request values the middleware sets. */
export interface AppEnv {
  /** Values set per request by the app's middleware. */
  Variables: {
    requestId: string;
    tenant: string;
    services: AppServices;
    /** The API key the request authenticated with (API keys on, non-public routes). */
    apiKey: ApiKeyIdentity | undefined;
  };
}

/** The route context of the app. */
export type Ctx = Context<AppEnv>;
