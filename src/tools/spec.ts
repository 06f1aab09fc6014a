/**
 * The resolved form of a manifest `tool` block that the runners take.
 */
import type { ToolConfig } from "../config/schema/tool.ts";

/**
 * A manifest tool block with its name. `module` is an absolute file path and relative paths in
 * `permissions` are already resolved (`buildTools` does both from the manifest's directory).
 */
export type ToolSpec = ToolConfig & { name: string };
