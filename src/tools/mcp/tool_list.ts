/**
 * An MCP server's tool list as agentd offers it: `tools/list` followed page by page (bounded in
 * pages and tools), narrowed to the block's allowlist, named for the model (names.ts), each tool
 * with a check of its arguments compiled when it is first called.
 */
import type { Client } from "@modelcontextprotocol/sdk/client";
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/types"
import { ListToolsResultSchema, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type {
  JsonSchemaValidator,
  JsonSchemaValidatorResult,
} from "@modelcontextprotocol/sdk/validation";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../outcome.ts";
import { modelToolNames } from "./names.ts";

/** Pages of `tools/list` followed at most per server. */
export const MAX_PAGES = 100;
/**
 * Tools kept at most per server (docs/tools.md#mcp-limits); the rest are ignored (and a warning
 * logged).
 */
export const MAX_TOOLS = 1000;

/** A server's tool as listed, with the check of its arguments. */
export interface Listed {
  /** The tool as the server describes it. */
  tool: McpTool;
  /**
   * Checks a call's arguments against the tool's input schema; null when the schema does not
   * compile (the arguments go unchecked). Compiled at the first call, not when the list arrives:
   * a server that lists a thousand tools, again at every `list_changed`, must not hold the event
   * loop for as many compilations.
   */
  validate(args: unknown): JsonSchemaValidatorResult<unknown> | null;
}

/**
 * Every tool the server lists (all pages, at most `MAX_TOOLS`). Through `tools/list` itself, not
 * the SDK's `listTools`, which compiles a validator of every listed tool's output schema at once.
 */
export async function listTools(
  client: Client,
  timeout: number,
  log: Logger,
): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      ListToolsResultSchema,
      { timeout },
    );
    tools.push(...result.tools.slice(0, MAX_TOOLS + 1 - tools.length));
    cursor = result.nextCursor;
    if (!cursor || tools.length > MAX_TOOLS) break;
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
  const names = new Set(listed.map((t) => t.name));
  const missing = allowed ? [...allowed].filter((n) => !names.has(n)) : [];
  // A fresh validator per list: ajv caches schemas by `$id`, which a changed tool may keep.
  const ajv = new AjvJsonSchemaValidator();
  const entries = new Map<string, Listed>();
  for (const [model, mcpName] of modelToolNames(server, [...byName.keys()])) {
    const tool = byName.get(mcpName)!;
    let compiled: JsonSchemaValidator<unknown> | null | undefined;
    const validate = (args: unknown) => {
      if (compiled === undefined) {
        try {
          compiled = ajv.getValidator(tool.inputSchema as Parameters<typeof ajv.getValidator>[0]);
        } catch (err) {
          compiled = null;
          log.warn("mcp tool input schema does not compile; arguments go unchecked", {
            tool: mcpName,
            error: errorMessage(err),
          });
        }
      }
      return compiled ? compiled(args) : null;
    };
    entries.set(model, { tool, validate });
  }
  return { offered: entries, missing };
}
