/** The `mcp_server "name"` blocks: MCP servers over stdio or Streamable HTTP, and their names. */
import { z } from "zod";

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

/** A validated `mcp_server` block. */
export type McpServerConfig = z.infer<typeof McpServerSchema>;
