/**
 * `GET /v1/agent`: the agent as this server runs it (name, model, tools with their schemas,
 * capabilities, the protocols on and where), for the playground and any client that wants to
 * show what it talks to. The same for every tenant: it describes the server, not a tenant's data.
 */
import { z } from "zod";
import denoConfig from "../../../deno.json" with { type: "json" };
import { NoQuerySchema } from "../../api/schemas.ts";
import type { Manifest } from "../../config/schema.ts";
import { resolveModel } from "../../models/mod.ts";
import { type AddOn, route, type Routes, routes } from "../kit/mod.ts";

const AgentToolSchema = z.object({
  name: z.string().describe("The name the model calls it by (`SERVER__TOOL` for an MCP tool)."),
  description: z.string().describe("What the tool does, as the model reads it."),
  kind: z.enum(["javascript", "python", "mcp"]).describe(
    "Where it runs: a JavaScript or Python module of the manifest, or an MCP server.",
  ),
  mcp_server: z.string().optional().describe("The `mcp_server` block, for an MCP tool."),
  parameters: z.record(z.string(), z.unknown()).describe("JSON Schema of its arguments."),
  requires_approval: z.boolean().describe("Whether a person approves each call first."),
}).strict().meta({ id: "AgentTool", description: "A tool the server can run." });

const AgentCapabilitySchema = z.object({
  name: z.string().describe("The capability's name (`capability_override` names it)."),
  description: z.string().optional().describe("What it is for."),
  tools: z.array(z.string()).describe("The tools it grants (names, MCP servers)."),
  default: z.boolean().describe("Whether runs have it without asking (`agent.capabilities`)."),
}).strict().meta({ id: "AgentCapability", description: "A named set of tools." });

const AgentProtocolSchema = z.object({
  name: z.string().describe("`native`, `ag_ui`, `a2a` or `ai_sdk`."),
  path: z.string().describe("Where its routes are, from the server's root."),
}).strict().meta({ id: "AgentProtocol", description: "A protocol the server speaks." });

/** The response of `GET /v1/agent`. */
export const AgentDescriptionSchema = z.object({
  name: z.string().describe("The agent's name (`agent.name`)."),
  description: z.string().describe("What the agent does (`agent.description`)."),
  version: z.string().describe("The agent's version (`agent.version`)."),
  agentd_version: z.string().describe("The version of agentd serving it."),
  model: z.object({
    provider: z.string().describe("The provider runs use unless they override it."),
    model: z.string().describe("The model runs use unless they override it."),
    models: z.array(z.string()).optional().describe(
      "The models a run's override may choose (`agent.model.models`); any when absent.",
    ),
  }).strict().describe("The agent's model."),
  max_steps: z.number().int().describe("Most model steps a run takes."),
  tools: z.array(AgentToolSchema).describe(
    "Every tool the server can run, the MCP servers' as they list them now.",
  ),
  capabilities: z.array(AgentCapabilitySchema).describe(
    "The manifest's capabilities; without any, every tool is offered to every run.",
  ),
  protocols: z.array(AgentProtocolSchema).describe("The protocols on: native first."),
}).strict().meta({ id: "AgentDescription", description: "The agent as the server runs it." });

/** What `GET /v1/agent` says. */
export type AgentDescription = z.infer<typeof AgentDescriptionSchema>;
/** One tool of it. */
export type AgentTool = z.infer<typeof AgentToolSchema>;

/** The manifest's own tools (JavaScript and Python), as `GET /v1/agent` lists them. */
export function manifestTools(manifest: Manifest): AgentTool[] {
  return Object.entries(manifest.tool).map(([name, tool]) => ({
    name,
    description: tool.description,
    kind: tool.kind,
    parameters: tool.parameters,
    requires_approval: tool.requires_approval,
  }));
}

/** Describes the agent of `manifest`, with `tools` (the manifest's and the MCP servers'). */
export function describeAgent(
  manifest: Manifest,
  tools: readonly AgentTool[],
  addOns: readonly AddOn[],
): AgentDescription {
  const agent = manifest.agent;
  // The manifest's model, as a run without an override gets it (no credentials needed for that).
  const resolved = resolveModel(agent.model, null, {});
  const defaults = new Set(agent.capabilities);
  return {
    name: agent.name,
    description: agent.description,
    version: agent.version,
    agentd_version: denoConfig.version,
    model: {
      provider: resolved.provider,
      model: resolved.model,
      ...(agent.model.models ? { models: agent.model.models } : {}),
    },
    max_steps: agent.max_steps,
    tools: [...tools],
    capabilities: Object.entries(manifest.capability).map(([name, capability]) => ({
      name,
      ...(capability.description ? { description: capability.description } : {}),
      tools: capability.tools,
      default: defaults.has(name),
    })),
    protocols: [
      { name: "native", path: "/v1" },
      ...addOns.map((addOn) => ({ name: addOn.name, path: addOn.basePath || "/" })),
    ],
  };
}

/** `GET /v1/agent`, mounted by the app under `/v1` (it needs the add-ons the app serves). */
export function agentRoutes(addOns: readonly AddOn[]): Routes {
  const r = routes();
  route(r, {
    method: "get",
    path: "/agent",
    operationId: "getAgent",
    tags: ["Agent"],
    summary: "Describe the agent",
    description: "The agent as this server runs it: name, model, tools with their JSON Schemas " +
      "and kinds, capabilities and the protocols on. The same for every tenant.",
    request: { query: NoQuerySchema },
    responses: {
      200: {
        description: "The agent.",
        content: { "application/json": { schema: AgentDescriptionSchema } },
      },
    },
    "x-errors": [422000],
  }, (c) => {
    const { config, mcpTools } = c.get("services");
    const mcp = [...(mcpTools?.() ?? [])].map(([name, tool]): AgentTool => ({
      name,
      description: tool.description,
      kind: "mcp",
      mcp_server: name.split("__")[0],
      parameters: tool.parameters,
      requires_approval: tool.requires_approval,
    }));
    return c.json(
      describeAgent(config.manifest, [...manifestTools(config.manifest), ...mcp], addOns),
    );
  });
  return r;
}
