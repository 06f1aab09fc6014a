/**
 * What the model sees of an MCP `tools/call` result (docs/tools.md#what-the-model-sees): the same
 * JSON value is the tool message and the `tool_call_result` content.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types";
import { toolError } from "../outcome.ts";
import type { ToolOutcome } from "../types.ts";

/** Largest result handed to the model, in characters of its JSON; a larger one is an error. */
export const MAX_RESULT_CHARS = 1_048_576;

type Block = CallToolResult["content"][number];

/** Size in bytes of base64 data. */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(data.length * 3 / 4) - padding);
}

/** A content block as JSON for the model: text stays text, binary data is described, not sent. */
function blockValue(block: Block): unknown {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return {
        type: block.type,
        mime_type: block.mimeType,
        bytes: base64Bytes(block.data),
        omitted: "binary content is not passed to the model",
      };
    case "resource_link":
      return {
        type: "resource_link",
        uri: block.uri,
        name: block.name,
        ...(block.mimeType ? { mime_type: block.mimeType } : {}),
        ...(block.description ? { description: block.description } : {}),
      };
    case "resource": {
      const r = block.resource;
      const head = {
        type: "resource",
        uri: r.uri,
        ...(r.mimeType ? { mime_type: r.mimeType } : {}),
      };
      return "text" in r ? { ...head, text: r.text } : {
        ...head,
        bytes: base64Bytes(r.blob),
        omitted: "binary content is not passed to the model",
      };
    }
    default:
      return { type: (block as { type?: unknown }).type ?? "unknown" };
  }
}

/**
 * The value of a result: `structuredContent` when the tool gave one (its text blocks are the same
 * data for older clients); otherwise the content blocks, as one string when they are all text
 * (joined by newlines), else as a list (text blocks as strings, others as objects).
 */
export function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && !result.isError) return result.structuredContent;
  const values = (result.content ?? []).map(blockValue);
  if (values.every((v) => typeof v === "string")) return values.join("\n");
  return values;
}

/** The outcome of a `tools/call` result: an `isError` result is an error outcome. */
export function resultOutcome(result: CallToolResult): ToolOutcome {
  const value = resultValue(result);
  // A text already past the cap is not encoded to learn it (its JSON is at least 2 longer).
  const long = typeof value === "string" && value.length > MAX_RESULT_CHARS;
  const size = long ? value.length + 2 : JSON.stringify(value)?.length ?? 0;
  if (size > MAX_RESULT_CHARS) {
    return toolError(
      `the MCP tool's result is too large (${long ? "at least " : ""}${size} characters of ` +
        `JSON; the limit is ${MAX_RESULT_CHARS})`,
    );
  }
  if (result.isError) {
    if (value === "" || (Array.isArray(value) && value.length === 0)) {
      return toolError("the MCP tool reported an error without a message");
    }
    return { result: value, is_error: true };
  }
  return { result: value, is_error: false };
}
