/**
 * The model seam as the engine sees it: a resolved model configuration and a stream of model
 * events that is open once the provider's response stream is established.
 */
import type { InferenceParams, RetryConfig } from "../config/schema/agent.ts";
import type { Message } from "../api/schemas.ts";
import type { SentRequest } from "../api/run_steps.ts";

/** The model a run uses after resolution (manifest, then environment, then run override). */
export interface ResolvedModel {
  /** The provider's name in the registry (`openai`, `echo`, ...). */
  provider: string;
  /** The model's name at the provider. */
  model: string;
  /** The provider endpoint, when not the provider's default. */
  base_url?: string;
  /** The credential sent to the provider. */
  api_key?: string;
  /** Inference parameters (defaults applied). */
  inference_params: InferenceParams;
  /** Milliseconds allowed to establish the response stream; none when undefined. */
  timeout?: number;
  /** Retry policy for establishing the stream. */
  retry: RetryConfig;
}

/** A tool as offered to the model. */
export interface ModelTool {
  /** The tool's name as the model sees it. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** What the engine asks of a model in one step. */
export interface ModelRequest {
  /** System instructions (agent instructions, capability instructions, context variables). */
  system: string;
  /** The conversation so far, in our message shape. */
  messages: Message[];
  /** The tools the model may call. */
  tools: ModelTool[];
}

/** Provider metadata of a part, by provider options key (`anthropic: { signature }`). */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

/** Tokens one model call used, as the provider reported them (a field it did not report is absent). */
export interface ModelUsage {
  /** Prompt tokens, cached ones included. */
  input_tokens?: number;
  /** Completion tokens, reasoning included. */
  output_tokens?: number;
  /** Of the output, the reasoning tokens. */
  reasoning_tokens?: number;
  /** Of the input, the tokens read from the provider's prompt cache. */
  cached_input_tokens?: number;
}

/** A source of a model's answer, in the fields of a stored `source` part. */
export interface ModelSource {
  /** The provider's id of the source (a citation's is its URL). */
  source_id: string;
  /** A web page or a document. */
  source_type: "url" | "document";
  /** The page's URL. */
  url?: string;
  /** Its title, when the provider gave one. */
  title?: string;
  /** A document's media type. */
  media_type?: string;
  /** A document's file name. */
  filename?: string;
  /** A citation's passage of the source. */
  cited_text?: string;
}

/** One event of an established model response stream. */
export type ModelEvent =
  | { type: "text-delta"; delta: string }
  /** A block of reasoning begins (`id` is the block's id in this stream). */
  | { type: "reasoning-start"; id: string }
  | { type: "reasoning-delta"; id: string; delta: string }
  /**
   * The block is complete; `provider_metadata` is everything the provider attached to it (a
   * signature, an encrypted value) that the next request must send back.
   */
  | { type: "reasoning-end"; id: string; provider_metadata?: ProviderMetadata }
  | { type: "tool-call-start"; id: string; name: string }
  | { type: "tool-call-delta"; id: string; delta: string }
  | {
    type: "tool-call";
    id: string;
    name: string;
    arguments: Record<string, unknown>;
    provider_metadata?: ProviderMetadata;
  }
  /** A call the provider runs itself (web search, an MCP connector); agentd never runs it. */
  | {
    type: "provider-tool-call";
    id: string;
    name: string;
    arguments: unknown;
    provider_metadata?: ProviderMetadata;
  }
  /** The result of a provider-run call. */
  | {
    type: "provider-tool-result";
    id: string;
    name: string;
    result: unknown;
    is_error: boolean;
    provider_metadata?: ProviderMetadata;
  }
  /** A source the model used (a search result) or a citation of one (with the cited passage). */
  | { type: "source"; source: ModelSource }
  /** Warnings of the provider about the request (unsupported settings, placeholders). */
  | { type: "warnings"; warnings: string[] }
  | {
    type: "finish";
    /** The unified reason: `stop`, `length`, `content-filter`, `tool-calls`, `other`. */
    reason: string;
    /** The provider's own reason (`max_tokens`, `refusal`, `MAX_TOKENS`), when it gave one. */
    raw_reason?: string;
    usage?: ModelUsage;
    /** The provider's explanation of a refusal, when it gave one. */
    explanation?: string;
  };

/** An established model response. */
export interface ModelStream {
  /** Requests made to establish it, counting the first. */
  attempts: number;
  /** Milliseconds from the first request to the established stream. */
  establish_ms: number;
  /** The stream's events, ending with a finish event. */
  events: AsyncIterable<ModelEvent>;
  /**
   * The request that established it, as the provider received it (secrets masked, the body cut
   * at `maxBytes`); built on call. Absent from clients that cannot tell (test doubles).
   */
  sent?: (maxBytes: number) => SentRequest;
}

/** Opens model streams; the engine's only view of providers. */
export interface ModelClient {
  /**
   * Resolves once the response stream is established (after retries); rejects with a
   * `ModelError`. Aborting `signal` aborts the request or the stream.
   */
  open(model: ResolvedModel, request: ModelRequest, signal: AbortSignal): Promise<ModelStream>;
}

/** One attempt as reported to `ModelMetrics.onAttempt`. */
export interface ModelAttemptInfo {
  /** The provider of the attempt. */
  provider: string;
  /** The model of the attempt. */
  model: string;
  /** 1 for the first request. */
  attempt: number;
  /** Milliseconds the attempt took (until established or failed). */
  ms: number;
  /** Whether the attempt established the stream. */
  ok: boolean;
  /** Error code of a failed attempt. */
  code?: string;
  /** HTTP status the provider answered with, when it answered. */
  status?: number;
  /** Whether a failed attempt will be retried. */
  retrying?: boolean;
  /** Milliseconds until the retry, when there is one. */
  delay_ms?: number;
}

/** Optional observation hooks (logs, metrics); they must not throw. */
export interface ModelMetrics {
  /** Called after every attempt, established or failed. */
  onAttempt?(info: ModelAttemptInfo): void;
  /** Called once per stream at the first text delta or tool call, with ms since `open()`. */
  onFirstToken?(info: { provider: string; model: string; ms: number }): void;
  /** Called once per stream at its finish, with the usage the provider reported. */
  onUsage?(info: { provider: string; model: string; usage: ModelUsage }): void;
}

/** A model failure; its payload becomes the failed run's `error`. */
export class ModelError extends Error {
  /** A failure (`code`, `message`) of `model` at `provider`, after `attempts` attempts. */
  constructor(
    readonly code: string,
    message: string,
    readonly provider: string,
    readonly model: string,
    readonly attempts: number,
  ) {
    super(message);
    this.name = "ModelError";
  }

  /**
   * The request of the last attempt as the provider received it, when one was sent (as
   * `ModelStream.sent`): a failed step's record shows what the provider refused.
   */
  sent?: (maxBytes: number) => SentRequest;
}
