/**
 * Why an MCP server is unreachable, stopped or failed to connect, in one sentence for the model,
 * `check` and the logs: a stdio server's exit status and the end of its stderr, HTTP statuses, and
 * never a URL (it may carry a token in its query).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../outcome.ts";
import { ProcessTransport } from "./process_transport.ts";

/**
 * An error message without the URLs in it (fetch names the URL it failed on): the model reads
 * these messages, and a URL may carry a token in its query.
 */
export function withoutUrls(text: string): string {
  return text.replace(/\s*(?:for url )?\(?\b[a-z][a-z0-9+.-]*:\/\/[^\s)]*\)?/gi, "");
}

/** A network failure reaching an HTTP server (refused, reset, DNS). */
export function isUnreachable(err: unknown): boolean {
  return err instanceof TypeError || (err as { name?: string })?.name === "ConnectionRefused";
}

/** Why a transport closed: a stdio server's exit status and the end of its stderr. */
export function closedReason(transport: Transport): string {
  if (transport instanceof ProcessTransport) {
    const status = transport.status;
    const how = transport.stopReason ??
      (!status
        ? "the connection closed"
        : status.signal
        ? `the process was killed by ${status.signal}`
        : `the process exited with code ${status.code}`);
    // One line, for `check` and the logs: the last lines of stderr joined by " | ".
    const tail = transport.stderrTail().trim().replaceAll("\n", " | ");
    return tail ? `${how}; stderr: ${tail.slice(-500)}` : how;
  }
  return "the connection closed";
}

/** Why connecting failed (`timeout`: the block's, in ms), in one sentence for `check` and logs. */
export function failureReason(err: unknown, transport: Transport, timeout: number): string {
  if (transport instanceof ProcessTransport && transport.status) {
    return closedReason(transport);
  }
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return `no answer within ${timeout} ms`;
  }
  if (err instanceof StreamableHTTPError) {
    return `the server answered HTTP ${err.code}: ${err.message}`;
  }
  if (isUnreachable(err)) return `cannot connect: ${withoutUrls(errorMessage(err))}`;
  return withoutUrls(errorMessage(err)).replace(/^(Error|McpError): /, "");
}
