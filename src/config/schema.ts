/**
 * The manifest schema: one zod schema that validates a normalized manifest (HCL or JSON) and
 * gives the typed configuration the rest of the program reads.
 *
 * Normalized form: single blocks (`agent`, `runtime`, `http_server`, ...) are objects; labelled
 * blocks (`capability "name"`, `tool "name"`, `mcp_server "name"`) are records keyed by label.
 *
 * Each block's schema is a file of `schema/` (`agent.ts`, `tool.ts`, `mcp_server.ts`, `runtime.ts`,
 * `http_server.ts`); this file puts them together and checks what spans blocks.
 */
import { z } from "zod";
import { AgentSchema, CapabilitySchema } from "./schema/agent.ts";
import { HttpServerSchema } from "./schema/http_server.ts";
import { MCP_SERVER_NAME, MCP_SERVER_NAME_MAX, McpServerSchema } from "./schema/mcp_server.ts";
import { RuntimeSchema } from "./schema/runtime.ts";
import { ToolSchema } from "./schema/tool.ts";

/** The whole manifest. */
export const ManifestSchema = z.object({
  agent: AgentSchema,
  capability: z.record(z.string(), CapabilitySchema).default({}),
  tool: z.record(z.string(), ToolSchema).default({}),
  mcp_server: z.record(z.string(), McpServerSchema).default({}),
  runtime: RuntimeSchema.prefault({}),
  http_server: HttpServerSchema.optional(),
}).strict().superRefine((manifest, ctx) => {
  // MCP tools are named `SERVER__TOOL`: server names must keep that split unambiguous, and no
  // other tool may take a name in a server's namespace.
  const servers = Object.keys(manifest.mcp_server);
  for (const name of servers) {
    if (!MCP_SERVER_NAME.test(name) || name.length > MCP_SERVER_NAME_MAX) {
      ctx.addIssue({
        code: "custom",
        path: ["mcp_server", name],
        message: `the name must start with a letter and hold letters and digits, joined by ` +
          `single '-' or '_' (no '__', no trailing '_'), at most ${MCP_SERVER_NAME_MAX} characters`,
      });
    }
  }
  for (const tool of Object.keys(manifest.tool)) {
    const server = servers.find((s) => tool === s || tool.startsWith(`${s}__`));
    if (server !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["tool", tool],
        message: `the name is taken by mcp_server "${server}" (it names the server, and ` +
          `${server}__* its tools); rename the tool or the server`,
      });
    }
  }
});

/** Validated manifest. */
export type Manifest = z.infer<typeof ManifestSchema>;

/**
 * The configuration the program runs with: the validated manifest plus where it came from
 * (paths in the manifest are relative to `baseDir`).
 */
export interface Config {
  manifest: Manifest;
  /** Absolute directory of the manifest file; relative paths in it resolve from here. */
  baseDir: string;
  /** The manifest file the configuration was loaded from, when there is one. */
  source?: string;
}
