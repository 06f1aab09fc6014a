/**
 * The provider registry: every provider a run may name, how to build its AI SDK language model,
 * where its credentials come from in the environment and under which key its `provider_params`
 * travel as AI SDK `providerOptions`.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createEchoModel } from "./echo.ts";
import type { PartsFactory } from "./sse_parts.ts";

/** What a provider factory gets to build one language model for one attempt. */
export interface ProviderModelOptions {
  modelId: string;
  /** Empty string when none is configured: the provider then answers 401 at run time. */
  apiKey: string;
  /** Always set for HTTP providers (the registry default when nothing is configured). */
  baseURL?: string;
  /** Our instrumented fetch (timeout, status and header observation). */
  fetch: typeof fetch;
}

/** One provider of the registry. */
export interface ProviderEntry {
  /** The name runs and manifests use (`model.override.provider`). */
  name: string;
  /** The AI SDK `providerOptions` key `provider_params` are passed under. */
  optionsKey: string;
  /** Environment variables of the credentials and endpoint. */
  env: { apiKey?: string; baseUrl?: string };
  /** Endpoint used when neither the manifest nor the environment names one. */
  defaultBaseUrl?: string;
  /** Model used when neither the manifest nor the override names one. */
  defaultModel?: string;
  /** False for providers that never touch the network (no first-byte wait, no timeout). */
  http: boolean;
  /**
   * Whether system messages may appear anywhere in the conversation. Anthropic and Google only
   * take leading system instructions, so later ones are sent as user text there.
   */
  inlineSystem: boolean;
  /**
   * Builds the AI SDK language model; `doStream` is called on it directly. Each provider package
   * is imported on its first model, not at start: a deployment loads only the ones it uses.
   */
  create(options: ProviderModelOptions): LanguageModelV4 | Promise<LanguageModelV4>;
  /**
   * Our own reader of a successful response body, in place of the AI SDK model's stream of parts
   * (the same parts, without its Web Streams chain); imported on the provider's first model. The
   * AI SDK model still builds and sends the request and judges the response status.
   */
  parts?: () => Promise<PartsFactory>;
}

// Explicit apiKey and baseURL always: otherwise the AI SDK would read `process.env` itself,
// bypassing the environment the service was configured with (and throwing on a missing key
// before any request, where we want the provider's own 401).
const entries: ProviderEntry[] = [
  {
    name: "echo",
    optionsKey: "echo",
    env: {},
    defaultModel: "echo",
    http: false,
    inlineSystem: true,
    create: ({ modelId }) => createEchoModel(modelId),
  },
  {
    name: "openai",
    optionsKey: "openai",
    env: { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
    defaultBaseUrl: "https://api.openai.com/v1",
    defaultModel: "gpt-4.1-mini",
    http: true,
    inlineSystem: true,
    // Chat Completions (not the Responses API) so any OpenAI-compatible endpoint works too.
    create: async ({ modelId, apiKey, baseURL, fetch }) => {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ apiKey, baseURL, fetch }).chat(modelId);
    },
    parts: async () => (await import("./openai_chat_stream.ts")).openaiChatParts,
  },
  {
    name: "anthropic",
    optionsKey: "anthropic",
    env: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
    defaultBaseUrl: "https://api.anthropic.com/v1",
    defaultModel: "claude-sonnet-4-5",
    http: true,
    inlineSystem: false,
    create: async ({ modelId, apiKey, baseURL, fetch }) => {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ apiKey, baseURL, fetch }).languageModel(modelId);
    },
  },
  {
    name: "google",
    optionsKey: "google",
    env: { apiKey: "GOOGLE_GENERATIVE_AI_API_KEY", baseUrl: "GOOGLE_GENERATIVE_AI_BASE_URL" },
    defaultBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
    defaultModel: "gemini-2.5-flash",
    http: true,
    inlineSystem: false,
    create: async ({ modelId, apiKey, baseURL, fetch }) => {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
      return createGoogleGenerativeAI({ apiKey, baseURL, fetch }).languageModel(modelId);
    },
  },
  {
    name: "openai-compatible",
    // The provider reads options under its name; unknown keys go into the request body as is.
    optionsKey: "openaiCompatible",
    env: { apiKey: "OPENAI_COMPATIBLE_API_KEY", baseUrl: "OPENAI_COMPATIBLE_BASE_URL" },
    http: true,
    inlineSystem: true,
    create: async ({ modelId, apiKey, baseURL, fetch }) =>
      (await import("@ai-sdk/openai-compatible")).createOpenAICompatible({
        name: "openaiCompatible",
        // Checked before any request (see client.ts); the fallback only satisfies the type.
        baseURL: baseURL ?? "",
        // Undefined sends no Authorization header at all: local servers often need none.
        apiKey: apiKey === "" ? undefined : apiKey,
        fetch,
        includeUsage: true,
      }).chatModel(modelId),
    parts: async () => (await import("./openai_compatible_stream.ts")).openaiCompatibleParts,
  },
];

const registry: ReadonlyMap<string, ProviderEntry> = new Map(entries.map((e) => [e.name, e]));

/** The registry entry of a provider name, or undefined when the name is unknown. */
export function providerEntry(name: string): ProviderEntry | undefined {
  return registry.get(name);
}

/** Names of every provider a manifest or a run override may choose. */
export function knownProviders(): string[] {
  return [...registry.keys()];
}

/** The provider packages, for `preloadProvider` (`create` imports the same module). */
const packages: Record<string, () => Promise<unknown>> = {
  openai: () => import("@ai-sdk/openai"),
  anthropic: () => import("@ai-sdk/anthropic"),
  google: () => import("@ai-sdk/google"),
  "openai-compatible": () => import("@ai-sdk/openai-compatible"),
};

/**
 * Starts loading a provider's package without waiting for it, so that a run's first model does
 * not wait for it either (start-up work after listening). Unknown or local providers: nothing.
 */
export function preloadProvider(name: string): void {
  packages[name]?.().catch(() => {});
}

/** The environment variables the providers read their API keys from (`OPENAI_API_KEY`, ...). */
export function credentialEnvNames(): string[] {
  return entries.flatMap((e) => (e.env.apiKey ? [e.env.apiKey] : []));
}
