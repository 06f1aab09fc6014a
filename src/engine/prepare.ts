/**
 * Run preparation: everything about a run that can be checked without I/O (model, capabilities,
 * tools, system prompt, the shape of `resume_payload`), so a bad request is refused before the
 * run record exists.
 */
import type { CapabilityOverride, ContextVar, RunRequest, ToolDefinition } from "../api/schemas.ts";
import type { Manifest } from "../config/schema.ts";
import type { FieldError } from "../errors.ts";
import { engineErrors } from "./errors.ts";
import { requestConflicts } from "./conflicts.ts";
import type { ModelTool } from "../models/mod.ts";
import type { Tool } from "../tools/mod.ts";
import { type ResumePayload, ResumePayloadSchema } from "../api/schemas.ts";
import { fieldErrors, parseInput } from "../api/validation.ts";
import type { EngineDeps, RunSetup } from "./types.ts";

/**
 * Validates a run request against the agent and resolves what the run will use. Throws a
 * `ModelConfigError` (unknown model or provider) or an `EngineError` `invalid_request` (unknown
 * capability, client tool name clash, malformed `resume_payload`, conflicts inside the request
 * such as two messages with one id).
 */
export function prepareRun(deps: EngineDeps, request: RunRequest): RunSetup {
  const manifest = deps.config.manifest;
  const model = deps.resolveModel(request.model);
  const fields: FieldError[] = requestConflicts(request);

  const capabilities = activeCapabilities(manifest, request.capability_override, fields);
  const tools = deps.mcpTools ? new Map([...deps.tools, ...deps.mcpTools()]) : deps.tools;
  const server_tools = serverTools(manifest, capabilities, tools);
  const client_tools = clientTools(request.tools ?? [], tools, manifest, fields);
  const resume = parseResume(request.resume_payload, fields);
  if (fields.length > 0) throw engineErrors.invalidRequest(fields);

  const model_tools: ModelTool[] = [
    ...[...server_tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
    ...[...client_tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
  ];

  return {
    model,
    capabilities,
    server_tools,
    client_tools,
    model_tools,
    system: systemPrompt(manifest, capabilities, request.context_vars ?? []),
    resume,
    max_steps: manifest.agent.max_steps,
    price: manifest.agent.model.prices?.[model.model] ?? null,
    token_budget: lowest(manifest.agent.token_budget, request.token_budget),
    show_reasoning: (request.reasoning ?? manifest.agent.reasoning) !== "hide",
  };
}

/** The lowest of the limits given, or null when none is. */
function lowest(...limits: (number | null | undefined)[]): number | null {
  const given = limits.filter((n): n is number => typeof n === "number");
  return given.length > 0 ? Math.min(...given) : null;
}

/**
 * The capability names a run uses: the agent's configured ones combined with the override.
 * Unknown names in the override are collected into `fields`.
 */
export function activeCapabilities(
  manifest: Manifest,
  override: CapabilityOverride | null | undefined,
  fields: FieldError[] = [],
): string[] {
  // Configured names were checked when the manifest loaded; an unknown one is skipped rather than
  // failing every run.
  const configured = manifest.agent.capabilities.filter((c) => c in manifest.capability);
  if (!override || override.strategy === "inherit") return dedupe(configured);

  override.capabilities.forEach((name, i) => {
    if (!(name in manifest.capability)) {
      fields.push({
        field: `capability_override.capabilities.${i}`,
        errors: [{
          code: "unknown_capability",
          message: `the agent has no capability '${name}'`,
          params: { name, known: Object.keys(manifest.capability) },
        }],
      });
    }
  });
  const listed = override.capabilities.filter((c) => c in manifest.capability);
  return dedupe(override.strategy === "extend" ? [...configured, ...listed] : listed);
}

/**
 * The server tools of a run: the tools of its active capabilities, where the name of an
 * `mcp_server` stands for all of its tools (`NAME__*`). A manifest that declares no capability at
 * all offers every tool it has (capabilities are then simply not in use).
 */
export function serverTools(
  manifest: Manifest,
  capabilities: string[],
  tools: Map<string, Tool>,
): Map<string, Tool> {
  if (Object.keys(manifest.capability).length === 0) return new Map(tools);
  const out = new Map<string, Tool>();
  for (const cap of capabilities) {
    for (const name of manifest.capability[cap]?.tools ?? []) {
      const tool = tools.get(name);
      if (tool) out.set(name, tool);
      if (name in manifest.mcp_server) {
        for (const [n, t] of tools) if (n.startsWith(`${name}__`)) out.set(n, t);
      }
    }
  }
  return out;
}

/**
 * The client tools of a request by name. A name shared with any server tool of the manifest (active
 * or not), or in an MCP server's namespace (`NAME__*`, whose tools may change), is refused, so a
 * tool name in a checkpoint always means one thing; so is a repeated name.
 */
function clientTools(
  defs: ToolDefinition[],
  server: Map<string, Tool>,
  manifest: Manifest,
  fields: FieldError[],
): Map<string, ToolDefinition> {
  const out = new Map<string, ToolDefinition>();
  const mcp = Object.keys(manifest.mcp_server);
  defs.forEach((def, i) => {
    const namespace = mcp.find((s) => def.name.startsWith(`${s}__`));
    if (server.has(def.name) || namespace !== undefined) {
      fields.push({
        field: `tools.${i}.name`,
        errors: [{
          code: "tool_name_conflict",
          message: namespace === undefined
            ? `'${def.name}' is the name of a server tool of the agent`
            : `'${def.name}' is in the namespace of the agent's MCP server '${namespace}'`,
          params: { name: def.name },
        }],
      });
    } else if (out.has(def.name)) {
      fields.push({
        field: `tools.${i}.name`,
        errors: [{
          code: "duplicate_tool",
          message: `the tool '${def.name}' is defined twice`,
          params: { name: def.name },
        }],
      });
    } else {
      out.set(def.name, def);
    }
  });
  return out;
}

/** Parses `resume_payload` into its engine shape, collecting shape errors into `fields`. */
function parseResume(
  raw: Record<string, unknown> | null | undefined,
  fields: FieldError[],
): ResumePayload | null {
  if (raw === null || raw === undefined) return null;
  const parsed = parseInput(ResumePayloadSchema, raw);
  if (parsed.success) return parsed.data;
  fields.push(...fieldErrors(ResumePayloadSchema, parsed.error.issues, "resume_payload"));
  return null;
}

/**
 * The system prompt: agent instructions, then each active capability's instructions, then the
 * request's context variables, one per line as `- <description>: <value>`.
 */
export function systemPrompt(
  manifest: Manifest,
  capabilities: string[],
  contextVars: ContextVar[],
): string {
  const sections: string[] = [];
  if (manifest.agent.instructions.trim()) sections.push(manifest.agent.instructions.trim());
  for (const cap of capabilities) {
    const text = manifest.capability[cap]?.instructions?.trim();
    if (text) sections.push(`## Capability: ${cap}\n${text}`);
  }
  if (contextVars.length > 0) {
    const lines = contextVars.map((v) => `- ${v.description}: ${v.value}`);
    sections.push(`## Context\n${lines.join("\n")}`);
  }
  return sections.join("\n\n");
}

function dedupe(names: string[]): string[] {
  return [...new Set(names)];
}
