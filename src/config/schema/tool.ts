/** The `tool "name"` blocks: server-side JavaScript or Python tools, their permissions, limits. */
import { z } from "zod";

/** What a tool may reach (files, network, environment variables); nothing by default. */
export const ToolPermissionsSchema = z.object({
  net: z.union([z.boolean(), z.array(z.string())]).default(false),
  read: z.union([z.boolean(), z.array(z.string())]).default(false),
  write: z.union([z.boolean(), z.array(z.string())]).default(false),
  env: z.union([z.boolean(), z.array(z.string())]).default(false),
}).strict();

/**
 * What one call of a tool may use (docs/tools.md#limits). Exceeding one fails the call with an
 * error naming the limit; the server and other calls go on.
 */
export const ToolLimitsSchema = z.object({
  /**
   * MiB. JavaScript: the V8 heap of the tool's process, and the process's data segment beyond
   * Deno's own reservation; Python: the process's data segment (heap and buffers).
   */
  memory: z.number().int().min(32).max(65_536).default(256),
  /** Bytes of the result's JSON text. */
  result_bytes: z.number().int().min(1).max(268_435_456).default(1_048_576),
  /** Live events (`emit`) per call. */
  emits: z.number().int().min(0).max(1_000_000).default(1_000),
  /** Bytes of all live events' JSON values of one call together. */
  emit_bytes: z.number().int().min(0).max(268_435_456).default(1_048_576),
  /** Python: processes and threads the tool may run at once (sandboxed tools only). */
  processes: z.number().int().min(1).max(4_096).default(32),
}).strict();

/** A server-side tool: a JavaScript/TypeScript module or a Python function. */
export const ToolSchema = z.object({
  description: z.string().default(""),
  kind: z.enum(["javascript", "python"]),
  /** Path of the module, relative to the manifest file. */
  module: z.string().min(1),
  /** Exported function name (JavaScript: default export when omitted; Python: required). */
  function: z.string().optional(),
  /** JSON Schema of the tool's arguments. */
  parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
  /** Per-call timeout in milliseconds. */
  timeout: z.number().int().positive().default(30_000),
  requires_approval: z.boolean().default(false),
  /**
   * Safe to run twice: a call in flight when its replica was lost is run again by the attempt
   * that resumes the run; otherwise it gets an error result (docs/tools.md#lost-replicas).
   */
  idempotent: z.boolean().default(false),
  permissions: ToolPermissionsSchema.prefault({}),
  limits: ToolLimitsSchema.prefault({}),
  /**
   * Python: `"none"` runs the tool without the OS sandbox (as the server's user, with its file
   * access); `check` warns about it. JavaScript tools always run in their Deno sandbox.
   */
  sandbox: z.literal("none").optional(),
}).strict();

/** A validated tool definition. */
export type ToolConfig = z.infer<typeof ToolSchema>;
/** A tool's validated limits. */
export type ToolLimits = z.infer<typeof ToolLimitsSchema>;
