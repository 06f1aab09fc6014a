/**
 * One MCP server as agentd uses it: an SDK `Client` over stdio or Streamable HTTP (transport.ts),
 * the server's tools as `Tool`s named for the model (tool_list.ts), and the life cycle around
 * them: the tool list cached and refreshed on `notifications/tools/list_changed`, a server that
 * stops restarted with backoff (its calls fail with a clear error meanwhile), an HTTP session that
 * the server forgot re-established.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import denoConfig from "../../../deno.json" with { type: "json" };
import type { McpServerConfig } from "../../config/schema/mcp_server.ts";
import type { Logger } from "../../log.ts";
import { errorMessage, toolError } from "../outcome.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "../types.ts";
import { closedReason, failureReason, isUnreachable, withoutUrls } from "./failures.ts";
import { REPLY_TOO_LARGE } from "./process_transport.ts";
import { progressSink } from "./progress.ts";
import { resultOutcome } from "./result.ts";
import { type Listed, listTools, offeredTools } from "./tool_list.ts";
import { createTransport, disconnect } from "./transport.ts";

/** Restart delays: the first one, doubled after each failure up to the last. */
export interface Backoff {
  /** Milliseconds before the first reconnect. */
  initial: number;
  /** Largest delay between reconnects, in milliseconds. */
  max: number;
}

/** Options of `McpConnection`. */
export interface McpConnectionOptions {
  /** Where connection problems are logged. */
  log: Logger;
  /** agentd's environment, from which a stdio server gets its base variables. */
  env: Record<string, string>;
  /** Restart delays in milliseconds; default 250 ms doubling up to 30 s. */
  backoff?: Backoff;
  /** Called after the server's tools changed (a refresh or a reconnection). */
  onToolsChanged?: () => void;
}

type State =
  | { kind: "idle" }
  | { kind: "connecting"; done: Promise<void> }
  | { kind: "ready"; client: Client; transport: Transport; since: number }
  | { kind: "down"; reason: string }
  | { kind: "closed" };

/** A connection to one `mcp_server` block, for the life of the agentd server. */
export class McpConnection {
  #state: State = { kind: "idle" };
  #tools = new Map<string, Tool>();
  #listed = new Map<string, Listed>();
  /** MCP names the allowlist names that the server does not offer (for `check`). */
  #missing: string[] = [];
  #failures = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  /** The tenant of the call in progress, for the `tenant_header` of HTTP requests. */
  readonly #tenant = new AsyncLocalStorage<string>();
  readonly #log: Logger;
  readonly #backoff: Backoff;

  /** A connection to one configured MCP server (not yet opened). */
  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {
    this.#log = options.log.with({ mcp_server: name });
    this.#backoff = options.backoff ?? { initial: 250, max: 30_000 };
  }

  /** The transport kind, for messages. */
  get kind(): "stdio" | "http" {
    return this.config.command ? "stdio" : "http";
  }

  /** The server's tools by the name the model sees (kept while the server is down). */
  get tools(): ReadonlyMap<string, Tool> {
    return this.#tools;
  }

  /** Tools the block's `tools` allowlist names that the server does not offer. */
  get missing(): readonly string[] {
    return this.#missing;
  }

  /** Model name → MCP name of every tool offered. */
  toolNames(): Map<string, string> {
    return new Map([...this.#listed].map(([model, l]) => [model, l.tool.name]));
  }

  /** Connects and lists the tools; throws an Error saying why when that fails (no retry). */
  async start(): Promise<void> {
    if (this.#state.kind !== "idle") throw new Error("the connection was already started");
    try {
      await this.#connect();
    } catch (err) {
      // (`close()` may have run meanwhile; TypeScript still sees the narrowed "idle".)
      if ((this.#state as State).kind !== "closed") {
        this.#state = { kind: "down", reason: (err as Error).message };
      }
      throw err;
    }
  }

  /** Disconnects for good: a stdio server's process group is stopped, an HTTP session ended. */
  async close(): Promise<void> {
    const state = this.#state;
    this.#state = { kind: "closed" };
    clearTimeout(this.#timer);
    if (state.kind === "connecting") await state.done.catch(() => {});
    if (state.kind === "ready") await disconnect(state.client, state.transport);
  }

  // -------------------------------------------------------------------------------------------
  // Connecting, restarting

  /** One connection attempt: a new transport and client, `initialize`, then the tool list. */
  #connect(): Promise<void> {
    const done = (async () => {
      const transport = createTransport(this.config, {
        env: this.options.env,
        log: this.#log,
        tenant: () => this.#tenant.getStore(),
      });
      const client = new Client({ name: "agentd", version: denoConfig.version }, {
        capabilities: {},
      });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (this.#current(client)) this.#refresh(client);
      });
      client.onclose = () => this.#lost(client, closedReason(transport));
      client.onerror = (err) => this.#transportError(client, err);
      try {
        await client.connect(transport, { timeout: this.config.timeout });
        this.#setTools(await listTools(client, this.config.timeout, this.#log));
      } catch (err) {
        const reason = failureReason(err, transport, this.config.timeout);
        await disconnect(client, transport);
        throw new Error(reason);
      }
      if (this.#state.kind === "closed") {
        await disconnect(client, transport);
        return;
      }
      this.#state = { kind: "ready", client, transport, since: Date.now() };
    })();
    this.#state = { kind: "connecting", done };
    return done;
  }

  /** Whether `client` is the live connection. */
  #current(client: Client): boolean {
    return this.#state.kind === "ready" && this.#state.client === client;
  }

  /** The live connection ended without agentd asking: restart it after a delay. */
  #lost(client: Client, reason: string): void {
    if (!this.#current(client)) return;
    const { transport, since } = this.#state as Extract<State, { kind: "ready" }>;
    // A server that ran longer than the longest delay starts over from the first one.
    if (Date.now() - since > this.#backoff.max) this.#failures = 0;
    this.#state = { kind: "down", reason };
    this.#log.warn("mcp server stopped", { reason });
    void disconnect(client, transport);
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    const delay = Math.min(this.#backoff.initial * 2 ** this.#failures, this.#backoff.max);
    this.#failures++;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (this.#state.kind !== "down") return;
      const before = (this.#state as { reason: string }).reason;
      this.#connect().then(() => {
        if (this.#state.kind === "ready") this.#log.info("mcp server reconnected");
      }, (err) => {
        if (this.#state.kind === "closed") return;
        const reason = errorMessage(err).replace(/^Error: /, "");
        this.#state = { kind: "down", reason: reason || before };
        this.#log.warn("mcp server restart failed", { reason, retry_in_ms: this.#nextDelay() });
        this.#scheduleRestart();
      });
    }, delay);
  }

  #nextDelay(): number {
    return Math.min(this.#backoff.initial * 2 ** this.#failures, this.#backoff.max);
  }

  /** Errors the transport reports outside a call. */
  #transportError(client: Client, err: Error): void {
    if (!this.#current(client)) return;
    // The server forgot the session (it restarted): its notifications stream cannot resume.
    if (err instanceof StreamableHTTPError && err.code === 404) {
      void this.#reestablish(client);
      return;
    }
    this.#log.debug("mcp transport error", { error: errorMessage(err) });
  }

  /** Replaces an HTTP session the server no longer knows with a new one (at once, no backoff). */
  async #reestablish(client: Client): Promise<void> {
    if (this.#state.kind === "connecting") return await this.#state.done.catch(() => {});
    if (!this.#current(client)) return;
    const { transport } = this.#state as Extract<State, { kind: "ready" }>;
    this.#log.info("mcp session expired; starting a new one");
    // The state is `connecting` from here on, so closing the old client is not taken for a loss.
    const connecting = this.#connect();
    await disconnect(client, transport);
    try {
      await connecting;
    } catch (err) {
      if (this.#state.kind === "closed") return;
      this.#state = { kind: "down", reason: errorMessage(err).replace(/^Error: /, "") };
      this.#scheduleRestart();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Tools

  /** Re-lists the tools after `list_changed` (one refresh at a time, again if asked meanwhile). */
  #refresh(client: Client): void {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        try {
          const tools = await listTools(client, this.config.timeout, this.#log);
          if (this.#current(client)) this.#setTools(tools);
        } catch (err) {
          this.#log.warn("mcp tool list refresh failed", { error: errorMessage(err) });
        }
      } while (this.#refreshAgain && this.#current(client));
    })().finally(() => this.#refreshing = undefined);
  }

  #setTools(listed: McpTool[]): void {
    const { offered, missing } = offeredTools(this.name, listed, this.config.tools, this.#log);
    const tools = new Map<string, Tool>();
    for (const [model, { tool }] of offered) {
      tools.set(model, {
        name: model,
        description: tool.description ?? tool.title ?? "",
        parameters: tool.inputSchema as Record<string, unknown>,
        requires_approval: false,
        idempotent: tool.annotations?.idempotentHint === true,
        call: (args, ctx) => this.call(model, args, ctx),
      });
    }
    this.#missing = missing;
    this.#listed = offered;
    this.#tools = tools;
    this.options.onToolsChanged?.();
  }

  // -------------------------------------------------------------------------------------------
  // Calls

  /** Calls the tool the model knows as `model`; never throws. */
  async call(
    model: string,
    args: Record<string, unknown>,
    ctx: ToolCallContext,
  ): Promise<ToolOutcome> {
    const listed = this.#listed.get(model);
    if (!listed) {
      return toolError(`the MCP server '${this.name}' no longer offers the tool '${model}'`);
    }
    const checked = listed.validate(args);
    if (checked && !checked.valid) {
      // ajv names the validated value `data`.
      const why = checked.errorMessage.replace(/\bdata(?=[/ ]|$)/g, "arguments");
      return toolError(`invalid arguments for '${model}': ${why}; the tool was not called`);
    }
    if (ctx.signal.aborted) return toolError("cancelled before the tool started");
    for (let attempt = 0;; attempt++) {
      if (this.#state.kind === "connecting") await this.#state.done.catch(() => {});
      const state = this.#state;
      if (state.kind !== "ready") return toolError(this.#unavailable());
      try {
        const result = await this.#tenant.run(
          ctx.tenant_id,
          () =>
            state.client.callTool({ name: listed.tool.name, arguments: args }, undefined, {
              signal: ctx.signal,
              timeout: this.config.timeout,
              onprogress: progressSink(model, ctx),
            }),
        );
        return resultOutcome(result as Parameters<typeof resultOutcome>[0]);
      } catch (err) {
        if (ctx.signal.aborted) {
          return toolError(
            "cancelled: the run was cancelled and the MCP server was sent notifications/cancelled",
          );
        }
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
          return toolError(
            `timed out after ${this.config.timeout} ms; the MCP server was sent ` +
              "notifications/cancelled",
          );
        }
        if (err instanceof StreamableHTTPError && err.code === 404 && attempt === 0) {
          // The server forgot our session (it restarted): a new session, and the call once more
          // (the server never saw it).
          await this.#reestablish(state.client);
          continue;
        }
        if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
          this.#lost(state.client, closedReason(state.transport));
          return toolError(
            `the MCP server '${this.name}' stopped during the call (${this.#downReason()}); ` +
              "agentd is restarting it",
          );
        }
        if (err instanceof McpError && err.code === REPLY_TOO_LARGE) {
          return toolError(
            `the reply of the MCP server '${this.name}' was too large: ${err.message}`,
          );
        }
        if (err instanceof McpError) {
          return toolError(`the MCP server '${this.name}' refused the call: ${err.message}`);
        }
        if (isUnreachable(err)) {
          this.#lost(state.client, `unreachable: ${withoutUrls(errorMessage(err))}`);
          return toolError(this.#unavailable());
        }
        return toolError(`the MCP call failed: ${withoutUrls(errorMessage(err))}`);
      }
    }
  }

  #downReason(): string {
    return this.#state.kind === "down" ? this.#state.reason : "it stopped";
  }

  #unavailable(): string {
    if (this.#state.kind === "closed") return `the MCP server '${this.name}' was shut down`;
    return `the MCP server '${this.name}' is not available (${this.#downReason()}); agentd ` +
      `reconnects in the background (next attempt within ${
        Math.ceil(this.#nextDelay() / 1000)
      } s), so try again later`;
  }
}
