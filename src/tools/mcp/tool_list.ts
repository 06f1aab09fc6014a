/**
 * An MCP server's tool list as agentd offers it: `tools/list` followed page by page (bounded in
 * pages and tools), narrowed to the block's allowlist, named for the model (names.ts), each tool
 * with a validator of its arguments.
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/types"
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../outcome.ts";
import { modelToolNames } from "./names.ts";

/** Pages of `tools/list` followed at most per server. */
export const MAX_PAGES = 100;
/** Tools kept at most per server; the rest are ignored (and a warning logged). */
export const MAX_TOOLS = 1000;

/** A server's tool as listed, with the validator of its arguments (null: none could be made). */
export interface Listed {
  /** The tool as the server describes it. */
  tool: McpTool;
  /** Checks a call's arguments against the tool's input schema. */
  validate: JsonSchemaValidator<unknown> | null;
}

/** Every tool the server lists (all pages, at most `MAX_TOOLS`). */
export async function listTools(
  client: Client,
  timeout: number,
  log: Logger,
): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor || tools.length >= MAX_TOOLS) break;
  }
  if (tools.length > MAX_TOOLS) {
    log.warn("mcp server lists too many tools; the rest are ignored", { max: MAX_TOOLS });
  }
  return tools.slice(0, MAX_TOOLS);
}

/**
 * The listed tools offered to the model, by the name it sees, and the allowlisted names the
 * server does not offer. `allow` is the block's `tools` allowlist (undefined: every tool).
 */
export function offeredTools(
  server: string,
  listed: McpTool[],
  allow: string[] | undefined,
  log: Logger,
): { offered: Map<string, Listed>; missing: string[] } {
  const allowed = allow ? new Set(allow) : null;
  const offered = allowed ? listed.filter((t) => allowed.has(t.name)) : listed;
  const byName = new Map(offered.map((t) => [t.name, t]));
  const missing = allowed ? [...allowed].filter((n) => !listed.some((t) => t.name === n)) : [];
  // A fresh validator per list: ajv caches schemas by `$id`, which a changed tool may keep.
  const ajv = new AjvJsonSchemaValidator();
  const entries = new Map<string, Listed>();
  for (const [model, mcpName] of modelToolNames(server, [...byName.keys()])) {
    const tool = byName.get(mcpName)!;
    let validate: JsonSchemaValidator<unknown> | null = null;
    try {
      validate = ajv.getValidator(tool.inputSchema as Parameters<typeof ajv.getValidator>[0]);
    } catch (err) {
      log.warn("mcp tool input schema does not compile; arguments go unchecked", {
        tool: mcpName,
        error: errorMessage(err),
      });
    }
    entries.set(model, { tool, validate });
  }
  return { offered: entries, missing };
}
