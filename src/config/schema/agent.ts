/**
 * The `agent` block (its `model`, with `inference_params` and `retry`) and the `capability`
 * blocks that name sets of tools the agent may have.
 */
import { z } from "zod";

/** Inference parameters of the spec's InferenceParams type; every field optional. */
export const InferenceParamsSchema = z.object({
  max_tokens: z.number().int().positive().nullish().describe("Most tokens a model step writes."),
  temperature: z.number().nullish().describe("Sampling temperature."),
  top_p: z.number().nullish().describe("Nucleus sampling: the probability mass considered."),
  top_k: z.number().int().nullish().describe("Sample among the k likeliest tokens only."),
  stop_sequences: z.array(z.string()).nullish().describe("Texts that end a model step."),
  frequency_penalty: z.number().nullish().describe("Penalty for repeating frequent tokens."),
  presence_penalty: z.number().nullish().describe("Penalty for repeating any earlier token."),
  seed: z.number().int().nullish().describe("Seed for deterministic sampling, where supported."),
  provider_params: z.record(z.string(), z.unknown()).nullish().describe(
    "Provider-specific options, passed to the provider as they are.",
  ),
}).strict().meta({
  id: "InferenceParams",
  description: "Inference parameters; each one the provider does not support is ignored.",
});

/** Retry policy for establishing the model response stream (spec: ModelConfigRetry). */
export const RetrySchema = z.object({
  max_attempts: z.number().int().min(1).max(100).describe("Attempts in all, the first included."),
  initial_backoff: z.number().int().min(0).max(600_000).describe(
    "Milliseconds before the first retry (doubled each retry).",
  ),
  max_backoff: z.number().int().min(0).max(3_600_000).describe(
    "Most milliseconds between two attempts.",
  ),
}).strict().refine((r) => r.max_backoff >= r.initial_backoff, {
  message: "max_backoff must be at least initial_backoff",
  path: ["max_backoff"],
}).meta({
  id: "ModelConfigRetry",
  description: "How establishing a model response stream is retried.",
});

/** A model's price per million tokens, in one currency of the operator's choice. */
export const PriceSchema = z.object({
  input_per_mtok: z.number().nonnegative().optional(),
  output_per_mtok: z.number().nonnegative().optional(),
  cached_input_per_mtok: z.number().nonnegative().optional(),
}).strict();

/** The agent's model block. */
export const ModelBlockSchema = z.object({
  provider: z.string().min(1).default("echo"),
  model: z.string().min(1).optional(),
  base_url: z.string().url().optional(),
  api_key: z.string().optional(),
  inference_params: InferenceParamsSchema.optional(),
  /** Milliseconds allowed to establish the response stream. */
  timeout: z.number().int().positive().optional(),
  retry: RetrySchema.optional(),
  /** Models a run's override may choose; any when omitted. */
  models: z.array(z.string().min(1)).optional(),
  /** Prices by model name, turning a run's usage into its `cost`. */
  prices: z.record(z.string().min(1), PriceSchema).optional(),
}).strict();

/** A named set of tools with optional extra instructions. */
export const CapabilitySchema = z.object({
  description: z.string().optional(),
  instructions: z.string().optional(),
  /** Tool names: `tool` blocks, MCP tools (`SERVER__TOOL`), or `mcp_server` names (all its tools). */
  tools: z.array(z.string()).default([]),
}).strict();

/** The agent block. */
export const AgentSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  version: z.string().default("0.1.0"),
  instructions: z.string().default(""),
  model: ModelBlockSchema.prefault({}),
  /** Names of the capabilities the agent has by default. */
  capabilities: z.array(z.string()).default([]),
  max_steps: z.number().int().min(1).max(10_000).default(25),
  /** Most tokens (input plus output) a run's model steps may use; none when omitted. */
  token_budget: z.number().int().positive().optional(),
  reasoning: z.enum(["show", "hide"]).default("show").describe(
    "Whether clients see the model's reasoning as events (`show`) or not (`hide`); what the " +
      "provider needs of it is stored and sent back either way.",
  ),
}).strict();

/** The agent's model block, validated. */
export type ModelBlock = z.infer<typeof ModelBlockSchema>;
/** Validated inference parameters. */
export type InferenceParams = z.infer<typeof InferenceParamsSchema>;
/** Validated retry policy. */
export type RetryConfig = z.infer<typeof RetrySchema>;
