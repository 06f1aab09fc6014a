/**
 * Model resolution: the manifest's model block, then provider credentials and endpoints from the
 * environment, then the run's `model.override`, then the run's `timeout` and `retry` (each on its
 * own). See docs/models.md for the rules in prose.
 */
import type { ModelConfig } from "../api/schemas.ts";
import type { InferenceParams, ModelBlock } from "../config/schema/agent.ts";
import { ModelConfigError } from "./errors.ts";
import { knownProviders, providerEntry } from "./registry.ts";
import type { ProviderEntry } from "./registry.ts";
import { DEFAULT_RETRY } from "./retry.ts";
import type { ResolvedModel } from "./types.ts";
import { ECHO_MODEL } from "./echo.ts";

/** Inference parameters without null or absent fields, so "unset" has one spelling. */
function compact(params: InferenceParams | null | undefined): InferenceParams {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as InferenceParams;
}

/** The registry entry of a name; an unknown one is refused naming the field it came from. */
function entryOf(name: string, field: string): ProviderEntry {
  const entry = providerEntry(name);
  if (!entry) {
    const known = knownProviders();
    throw new ModelConfigError(
      "unknown_provider",
      field,
      `unknown provider '${name}'; known providers: ${known.join(", ")}`,
      { known },
    );
  }
  return entry;
}

/**
 * Resolves the model a run uses. Throws a `ModelConfigError` for an override naming an unknown
 * provider (`model.override.provider`, kind `unknown_provider`) or a model the manifest does not
 * allow (`model.override.model`, kind `unknown_model`). Missing credentials are not an error here:
 * the provider answers 401 at run time.
 */
export function resolveModel(
  manifestModel: ModelBlock,
  runModel: ModelConfig | null | undefined,
  env: Record<string, string>,
): ResolvedModel {
  const base = entryOf(manifestModel.provider, "agent.model.provider");
  const override = runModel?.override ?? undefined;
  const entry = override?.provider ? entryOf(override.provider, "model.override.provider") : base;
  // The manifest's endpoint, key, model and provider_params belong to the manifest's provider;
  // an override that switches provider must not send them elsewhere.
  const sameProvider = entry === base;
  // A model problem is the run's when its override chose the model (or the provider, and with it
  // the provider's default model), otherwise the manifest's.
  const modelField = override?.model || override?.provider
    ? "model.override.model"
    : "agent.model.model";

  const model = override?.model ?? (sameProvider ? manifestModel.model : undefined) ??
    entry.defaultModel;
  if (model === undefined) {
    throw new ModelConfigError(
      "model_required",
      modelField,
      `provider '${entry.name}' has no default model; name one`,
    );
  }
  if (entry.name === "echo" && model !== ECHO_MODEL) {
    throw new ModelConfigError(
      "unknown_model",
      modelField,
      `the echo provider only has the model 'echo'`,
      {
        known: [ECHO_MODEL],
      },
    );
  }
  const allowed = manifestModel.models;
  if (allowed && (override?.model || override?.provider) && !allowed.includes(model)) {
    throw new ModelConfigError(
      "unknown_model",
      "model.override.model",
      `model '${model}' is not one of the models this agent allows: ${allowed.join(", ")}`,
      { known: allowed },
    );
  }

  const inherited = compact(manifestModel.inference_params);
  if (!sameProvider) delete inherited.provider_params;
  const inference_params = { ...inherited, ...compact(override?.inference_params) };

  const resolved: ResolvedModel = {
    provider: entry.name,
    model,
    inference_params,
    retry: { ...(runModel?.retry ?? manifestModel.retry ?? DEFAULT_RETRY) },
  };
  const baseUrl = (sameProvider ? manifestModel.base_url : undefined) ??
    (entry.env.baseUrl ? env[entry.env.baseUrl] : undefined);
  const apiKey = (sameProvider ? manifestModel.api_key : undefined) ??
    (entry.env.apiKey ? env[entry.env.apiKey] : undefined);
  if (baseUrl) resolved.base_url = baseUrl;
  if (apiKey) resolved.api_key = apiKey;
  const timeout = runModel?.timeout ?? manifestModel.timeout;
  if (timeout != null) resolved.timeout = timeout;
  return resolved;
}

/** Hosts the `openai` provider is made for (OpenAI itself and Azure OpenAI). */
const OPENAI_HOSTS = [/^api\.openai\.com$/, /\.openai\.azure\.com$/];

/**
 * Advice about a manifest's model block that is not an error (`agentd check` prints it): the
 * `openai` provider pointed at a server that is not OpenAI. That provider validates OpenAI's own
 * stream strictly and refuses what other servers send (a Mistral tool call without `index`), where
 * `openai-compatible` accepts it.
 */
export function modelWarnings(model: ModelBlock, env: Record<string, string>): string[] {
  if (model.provider !== "openai") return [];
  const baseUrl = model.base_url ?? env.OPENAI_BASE_URL;
  if (!baseUrl) return [];
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return [];
  }
  if (OPENAI_HOSTS.some((h) => h.test(host))) return [];
  return [
    `agent.model: provider "openai" with base_url ${baseUrl}, which is not OpenAI: the openai ` +
    `provider refuses streams other servers send (Mistral tool calls without "index"); use ` +
    `provider "openai-compatible" for Ollama, vLLM, LM Studio, Groq, OpenRouter, DeepSeek, ` +
    `Mistral, Together and other OpenAI-compatible servers`,
  ];
}
