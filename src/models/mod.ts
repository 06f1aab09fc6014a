/**
 * Models: the provider registry (openai, anthropic, google, openai-compatible and the offline
 * echo), model resolution for a run, and the client that opens model response streams with an
 * establishment timeout and retries. See docs/models.md.
 */
export { createModelClient } from "./client.ts";
export type { ModelClientOptions } from "./client.ts";
export { modelWarnings, resolveModel } from "./resolve.ts";
export { credentialEnvNames, knownProviders, preloadProvider } from "./registry.ts";
export { DEFAULT_RETRY } from "./retry.ts";
export { ModelError } from "./types.ts";
export { ModelConfigError, type ModelConfigErrorKind } from "./errors.ts";
export type {
  ModelAttemptInfo,
  ModelClient,
  ModelEvent,
  ModelMetrics,
  ModelRequest,
  ModelSource,
  ModelStream,
  ModelTool,
  ModelUsage,
  ProviderMetadata,
  ResolvedModel,
} from "./types.ts";
