/** Decorating a tool at the seam (metrics, spans, scrubbing) without it knowing. */
import type { Tool } from "./types.ts";

/** A tool like `tool` whose calls go through `call` (which may call `tool.call`). */
export function wrapTool(tool: Tool, call: Tool["call"]): Tool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    requires_approval: tool.requires_approval,
    idempotent: tool.idempotent,
    call,
  };
}
