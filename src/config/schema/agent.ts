/**
 * The `agent` block (its `model`, with `inference_params` and `retry`) and the `capability`
 * blocks that name sets of tools the agent may have.
 */
import { z } from "zod";

/** Inference parameters of the spec's InferenceParams type; every field optional. */
export const InferenceParamsSchema = z.object({
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  frequency_penalty: z.number().nullish(),
  presence_penalty: z.number().nullish(),
  seed: z.number().int().nullish(),
  provider_params: z.record(z.string(), z.unknown()).nullish(),
}).strict().meta({ id: "InferenceParams" });

/** Retry policy for establishing the model response stream (spec: ModelConfigRetry). */
export const RetrySchema = z.object({
  max_attempts: z.number().int().min(1).max(100),
  initial_backoff: z.number().int().min(0).max(600_000),
  max_backoff: z.number().int().min(0).max(3_600_000),
}).strict().refine((r) => r.max_backoff >= r.initial_backoff, {
  message: "max_backoff must be at least initial_backoff",
  path: ["max_backoff"],
}).meta({ id: "ModelConfigRetry" });

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
}).strict();

/** The agent's model block, validated. */
export type ModelBlock = z.infer<typeof ModelBlockSchema>;
/** Validated inference parameters. */
export type InferenceParams = z.infer<typeof InferenceParamsSchema>;
/** Validated retry policy. */
export type RetryConfig = z.infer<typeof RetrySchema>;
