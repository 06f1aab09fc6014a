/**
 * The names the model sees for MCP tools: `SERVER__TOOL`, kept within what every provider accepts
 * for a function name (OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`; Gemini: the same, starting
 * with a letter or `_`). Server names are checked by the manifest schema (`MCP_SERVER_NAME`), so
 * only the tool part can break the rule.
 */
import { createHash } from "node:crypto";

/** The longest tool name every provider accepts. */
export const MAX_TOOL_NAME = 64;

/** What joins a server name to its tools' names. */
export const SEPARATOR = "__";

const VALID = /^[A-Za-z0-9_-]+$/;
const HASH_DIGITS = 8;

/** The prefix of every model-visible name of a server's tools. */
export function serverPrefix(server: string): string {
  return server + SEPARATOR;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Model-visible names for the tools a server lists (model name → MCP name), deterministic for a
 * given list:
 *
 * 1. a tool whose name holds only `A-Z a-z 0-9 _ -` and fits (`SERVER__TOOL` ≤ 64) keeps it;
 * 2. any other tool, in name order, becomes `SERVER__` + its name with every other character
 *    replaced by `_`, cut so that `_` + 8 hex digits of the SHA-256 of its MCP name fit in 64;
 *    should that name be taken, the digits of `sha256(name + "#1")`, `#2`... are used instead.
 *
 * A repeated MCP name keeps its first entry. Distinct tools never share a name.
 */
export function modelToolNames(server: string, tools: readonly string[]): Map<string, string> {
  const prefix = serverPrefix(server);
  const out = new Map<string, string>();
  const unique = [...new Set(tools)];
  const rest: string[] = [];
  for (const tool of unique) {
    if (VALID.test(tool) && prefix.length + tool.length <= MAX_TOOL_NAME) {
      out.set(prefix + tool, tool);
    } else {
      rest.push(tool);
    }
  }
  for (const tool of rest.sort()) {
    const base = (prefix + tool.replace(/[^A-Za-z0-9_-]/g, "_"))
      .slice(0, MAX_TOOL_NAME - 1 - HASH_DIGITS);
    for (let i = 0;; i++) {
      const name = `${base}_${sha256(i === 0 ? tool : `${tool}#${i}`).slice(0, HASH_DIGITS)}`;
      if (!out.has(name)) {
        out.set(name, tool);
        break;
      }
    }
  }
  return out;
}
