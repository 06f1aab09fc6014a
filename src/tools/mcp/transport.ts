/**
 * The transport of one `mcp_server` block and its end: a stdio server as a process group
 * (process_transport.ts), or Streamable HTTP with the block's headers and, when the block names a
 * `tenant_header`, the calling run's tenant in it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import type { McpServerConfig } from "../../config/schema/mcp_server.ts";
import type { Logger } from "../../log.ts";
import { processEnv, ProcessTransport } from "./process_transport.ts";

/** What a block's transport needs besides the block. */
export interface TransportOptions {
  /** agentd's environment, from which a stdio server gets its base variables. */
  env: Record<string, string>;
  /** Where a stdio server's stderr lines go. */
  log: Logger;
  /** The tenant of the call in progress (undefined outside a call). */
  tenant: () => string | undefined;
}

/** A new, unconnected transport for the block. */
export function createTransport(config: McpServerConfig, options: TransportOptions): Transport {
  if (config.command) {
    return new ProcessTransport({
      command: config.command,
      env: processEnv(config.env, options.env),
      cwd: config.cwd ?? Deno.cwd(),
      onStderr: (line) => options.log.info("mcp server stderr", { line }),
    });
  }
  const header = config.tenant_header;
  return new StreamableHTTPClientTransport(new URL(config.url!), {
    requestInit: { headers: config.headers ?? {} },
    fetch: (url, init) => {
      const tenant = header ? options.tenant() : undefined;
      if (tenant === undefined) return fetch(url, init);
      const headers = new Headers(init?.headers);
      headers.set(header!, tenant);
      return fetch(url, { ...init, headers });
    },
  });
}

/** Ends a connection: an HTTP session is terminated (best effort, bounded), both sides closed. */
export async function disconnect(client: Client, transport: Transport): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    // Tell the server the session is over (best effort, bounded).
    await withTimeout(transport.terminateSession(), 2000).catch(() => {});
  }
  await client.close().catch(() => {});
  await transport.close().catch(() => {});
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => timer = setTimeout(resolve, ms)),
  ]).finally(() => clearTimeout(timer));
}
