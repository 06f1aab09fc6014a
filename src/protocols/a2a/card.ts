/**
 * The Agent Card (A2A v1.0 shape) derived from the manifest: identity and version from the
 * `agent` block, both bindings (JSON-RPC and HTTP+JSON) at the add-on's absolute base URL, the
 * capabilities we have (streaming yes, push notifications and the extended card no, the
 * extensions the manifest declares), and skills from the agent's capabilities (or its tools when
 * the manifest declares no capability).
 */
import type { Manifest } from "../../config/schema.ts";
import { authScheme } from "../../http/kit/mod.ts";
import { INPUT_MODES, OUTPUT_MODES } from "./request.ts";
import { AGENTD_EXTENSIONS } from "./task.ts";
import {
  A2A_BINDINGS,
  A2A_VERSION,
  type AgentCard,
  type AgentExtension,
  type AgentSkill,
} from "./schemas.ts";

/**
 * The absolute URL of the add-on's base: `http_server.public_url` when set (for proxies),
 * else the origin the request came to; then the base path.
 */
export function baseUrl(manifest: Manifest, requestUrl: string): string {
  const publicUrl = manifest.http_server?.public_url;
  const root = (publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, "");
  const path = (manifest.http_server?.protocol.a2a?.path ?? "/a2a").replace(/\/+$/, "");
  return root + path;
}

/**
 * Skills: each capability the agent has by default (its tools as tags); with no capability block
 * at all, each tool (all are offered then); with neither, one general skill for the agent itself.
 */
export function skills(manifest: Manifest): AgentSkill[] {
  const modes = { inputModes: [...INPUT_MODES], outputModes: [...OUTPUT_MODES] };
  const defined = manifest.capability;
  const out: AgentSkill[] = [];
  if (Object.keys(defined).length > 0) {
    for (const name of new Set(manifest.agent.capabilities)) {
      const cap = defined[name];
      if (!cap) continue;
      out.push({
        id: name,
        name,
        description: cap.description || cap.instructions?.trim() || `The ${name} capability`,
        tags: ["capability", ...cap.tools],
        ...modes,
      });
    }
  } else {
    for (const [name, tool] of Object.entries(manifest.tool)) {
      out.push({
        id: name,
        name,
        description: tool.description || `The ${name} tool`,
        tags: ["tool", ...(tool.requires_approval ? ["requires-approval"] : [])],
        ...modes,
      });
    }
  }
  if (out.length === 0) {
    const agent = manifest.agent;
    out.push({
      id: agent.name,
      name: agent.name,
      description: agent.description || `Converse with ${agent.name}`,
      tags: ["chat"],
      ...modes,
    });
  }
  return out;
}

/** The extensions the manifest declares (`a2a { extension "uri" { ... } }`), in card shape. */
export function declaredExtensions(manifest: Manifest): AgentExtension[] {
  const declared = manifest.http_server?.protocol.a2a?.extension ?? {};
  return Object.entries(declared).map(([uri, ext]) => ({
    uri,
    ...(ext.description ? { description: ext.description } : {}),
    required: ext.required,
    ...(ext.params ? { params: ext.params } : {}),
  }));
}

/**
 * The card. Both bindings are served at the base URL: JSON-RPC by `POST <base>`, HTTP+JSON by the
 * REST paths under it; JSON-RPC is listed first, as most A2A clients speak it. `tenant`, when the
 * caller named one (header or path), goes into each interface, so a client built from this card
 * keeps addressing that tenant (spec: AgentInterface.tenant).
 */
export function agentCard(manifest: Manifest, url: string, tenant?: string): AgentCard {
  const binding = (protocolBinding: string) => ({
    url,
    protocolBinding,
    protocolVersion: A2A_VERSION,
    ...(tenant ? { tenant } : {}),
  });
  return {
    name: manifest.agent.name,
    description: manifest.agent.description || manifest.agent.name,
    version: manifest.agent.version,
    supportedInterfaces: [binding(A2A_BINDINGS.jsonRpc), binding(A2A_BINDINGS.rest)],
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [...declaredExtensions(manifest), ...AGENTD_EXTENSIONS],
    },
    defaultInputModes: [...INPUT_MODES],
    defaultOutputModes: [...OUTPUT_MODES],
    skills: skills(manifest),
    // With API keys on: how to authenticate (docs/auth.md); nothing when they are off.
    ...authScheme(manifest),
  };
}
