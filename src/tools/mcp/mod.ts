/**
 * MCP tool servers (`mcp_server` blocks, docs/tools.md#mcp-servers): every server of the manifest
 * connected when the service starts, their tools offered to runs as `SERVER__TOOL`.
 *
 * @module
 */
import type { Config } from "../../config/schema.ts";
import { createLogger, type Logger } from "../../log.ts";
import type { Tool } from "../types.ts";
import { type Backoff, McpConnection } from "./connection.ts";

export { type Backoff, McpConnection, type McpConnectionOptions } from "./connection.ts";
export { MAX_TOOL_NAME, modelToolNames, SEPARATOR, serverPrefix } from "./names.ts";
export {
  MAX_LINE_BYTES,
  MAX_QUEUED_BYTES,
  MAX_QUEUED_MESSAGES,
  MCP_BASE_ENV,
  processEnv,
  ProcessTransport,
  REPLY_TOO_LARGE,
} from "./process_transport.ts";
export { MAX_TOOLS } from "./tool_list.ts";
export { MAX_RESULT_CHARS, resultOutcome, resultValue } from "./result.ts";

/** Options of `startMcpServers`. */
export interface McpServersOptions {
  /** Where the servers' stderr lines and restarts are logged; nowhere by default. */
  log?: Logger;
  /** agentd's environment (stdio servers get its base variables); the process's by default. */
  env?: Record<string, string>;
  /** Restart delays (tests shorten them). */
  backoff?: Backoff;
}

/** Servers that could not be started; one line per server, as `check` and `serve` print them. */
export class McpStartupError extends Error {
  /** An error listing `problems`, one line per server that could not start. */
  constructor(readonly problems: string[]) {
    super(`MCP servers failed to start:\n  ${problems.join("\n  ")}`);
    this.name = "McpStartupError";
  }
}

/** The MCP servers of a manifest (connected by `startMcpServers`); `await using` closes them. */
export class McpServers implements AsyncDisposable {
  #merged: Map<string, Tool> | undefined;
  /** One connection per `mcp_server` block, not yet started. */
  readonly connections: readonly McpConnection[];

  /** The servers of `config`, not yet connected. */
  constructor(config: Config, options: McpServersOptions & { log: Logger }) {
    const env = options.env ?? Deno.env.toObject();
    this.connections = Object.entries(config.manifest.mcp_server).map(([name, server]) =>
      new McpConnection(name, server, {
        log: options.log,
        env,
        backoff: options.backoff,
        onToolsChanged: () => this.#merged = undefined,
      })
    );
  }

  /**
   * Every MCP tool offered now, by the name the model sees. The same Map until a server's tool
   * list changes, so callers may cache what they derive from it by identity.
   */
  tools(): Map<string, Tool> {
    this.#merged ??= new Map(this.connections.flatMap((c) => [...c.tools]));
    return this.#merged;
  }

  /**
   * One line per server for `check`: its tools as the model sees them (`SERVER__TOOL`, with the
   * MCP name when it had to change), and allowlisted tools the server does not offer.
   */
  describe(): string[] {
    return this.connections.map((c) => {
      const names = [...c.toolNames()].map(([model, mcp]) =>
        model === `${c.name}__${mcp}` ? model : `${model} (MCP name ${JSON.stringify(mcp)})`
      );
      const missing = c.missing.length
        ? `; not offered by the server: ${c.missing.join(", ")}`
        : "";
      return `mcp_server "${c.name}" (${c.kind}): ${names.length} tool(s)` +
        (names.length ? `: ${names.join(", ")}` : "") + missing;
    });
  }

  /** Disconnects every server (stdio process groups stopped, HTTP sessions ended). */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }

  /** `close()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Connects every `mcp_server` of the manifest (all at once) and lists their tools. When one
 * fails, the others are disconnected again and an `McpStartupError` names each failure.
 */
export async function startMcpServers(
  config: Config,
  options: McpServersOptions = {},
): Promise<McpServers> {
  const log = options.log ?? createLogger("error", {}, () => {});
  const servers = new McpServers(config, { ...options, log });
  const connections = servers.connections;
  const results = await Promise.allSettled(connections.map((c) => c.start()));
  const problems = results.flatMap((r, i) =>
    r.status === "rejected"
      ? [`mcp_server '${connections[i].name}': cannot start: ${(r.reason as Error).message}`]
      : []
  );
  if (problems.length > 0) {
    await servers.close();
    throw new McpStartupError(problems);
  }
  for (const c of connections) {
    log.info("mcp server connected", { mcp_server: c.name, tools: [...c.tools.keys()] });
    if (c.missing.length) {
      log.warn("mcp server does not offer allowlisted tools", {
        mcp_server: c.name,
        missing: c.missing,
      });
    }
  }
  return servers;
}
