/**
 * What the model reported on a run: token usage, finish reasons and warnings. One zod schema per
 * wire shape (the run record's and `run_finished`'s fields), the stored report, and the totals.
 */
import { z } from "zod";

const Tokens = z.number().int().nonnegative();

/** Tokens as the provider reported them (a count it did not report is absent, never guessed). */
export const UsageSchema = z.object({
  input_tokens: Tokens.optional().describe("Prompt tokens, cached ones included."),
  output_tokens: Tokens.optional().describe("Completion tokens, reasoning included."),
  reasoning_tokens: Tokens.optional().describe("Of the output, the reasoning tokens."),
  cached_input_tokens: Tokens.optional().describe(
    "Of the input, the tokens read from the provider's prompt cache.",
  ),
}).meta({ id: "Usage", description: "Tokens the model used, as the provider reported them." });

/** Why the model stopped. */
export const FinishReasonSchema = z.enum([
  "stop",
  "length",
  "content_filter",
  "refusal",
  "tool_calls",
  "other",
]).meta({
  id: "FinishReason",
  description: "Why the model stopped: `stop` (it answered), `length` (the output limit), " +
    "`content_filter` (the provider's filter), `refusal` (the model refused; its explanation is " +
    "the answer), `tool_calls` (it called tools), `other`.",
});

/** One model step's report. */
export const ModelStepReportSchema = z.object({
  step: z.number().int().describe("The step's number in the run."),
  finish_reason: FinishReasonSchema.describe("Why the model stopped in this step."),
  raw_finish_reason: z.string().optional().describe(
    "The provider's own reason (`max_tokens`, `MAX_TOKENS`, `refusal`), when it gave one.",
  ),
  usage: UsageSchema.describe("The step's tokens."),
  cost: z.number().nonnegative().optional().describe(
    "What the step's tokens cost at the model's price in the manifest (absent without a price).",
  ),
}).meta({ id: "ModelStepReport", description: "What the model reported in one step." });

/** Usage and finish reasons. */
export type Usage = z.infer<typeof UsageSchema>;
export type FinishReason = z.infer<typeof FinishReasonSchema>;
export type ModelStepReport = z.infer<typeof ModelStepReportSchema>;

/** A model's price per million tokens (manifest `agent.model.prices`), in any one currency. */
export interface Price {
  input_per_mtok?: number;
  output_per_mtok?: number;
  cached_input_per_mtok?: number;
}

/**
 * What `usage` costs at `price`: uncached input at the input price, cached input at the cached
 * price (the input price when it has none), output (reasoning included) at the output price; a
 * count the provider did not report adds nothing. Rounded to 1e-9 so sums stay readable.
 */
export function costOf(usage: Usage, price: Price): number {
  const input = usage.input_tokens ?? 0;
  const cached = Math.min(usage.cached_input_tokens ?? 0, input);
  const inputPrice = price.input_per_mtok ?? 0;
  const total = (input - cached) * inputPrice +
    cached * (price.cached_input_per_mtok ?? inputPrice) +
    (usage.output_tokens ?? 0) * (price.output_per_mtok ?? 0);
  return roundCost(total / 1_000_000);
}

/** A cost rounded to 1e-9 (float sums of prices otherwise end in ...0000001). */
export function roundCost(cost: number): number {
  return Math.round(cost * 1e9) / 1e9;
}

/** What a run's record keeps of its model (the `runs.model_report` column). */
export interface ModelReport {
  provider: string;
  model: string;
  steps: ModelStepReport[];
  warnings: string[];
}

/** The run record's fields of a report (nothing reported: null and empty). */
export function modelFields(report: ModelReport | null | undefined): {
  usage: Usage | null;
  finish_reason: FinishReason | null;
  model_steps: ModelStepReport[];
  warnings: string[];
  cost: number | null;
} {
  const steps = report?.steps ?? [];
  const costs = steps.flatMap((s) => typeof s.cost === "number" ? [s.cost] : []);
  return {
    usage: steps.length > 0 ? totalUsage(steps.map((s) => s.usage)) : null,
    cost: costs.length > 0 ? roundCost(costs.reduce((a, b) => a + b, 0)) : null,
    finish_reason: steps.at(-1)?.finish_reason ?? null,
    model_steps: steps,
    warnings: report?.warnings ?? [],
  };
}

/** Usage in the camelCase names AG-UI's `TokenUsage` and the AI SDK share. */
export interface CamelUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/**
 * Native usage in camelCase (AG-UI, the AI SDK): counts the provider did not report stay
 * absent, and the total is given only when both input and output are known.
 */
export function camelUsage(usage: Usage): CamelUsage {
  const out: CamelUsage = {};
  if (usage.input_tokens !== undefined) out.inputTokens = usage.input_tokens;
  if (usage.output_tokens !== undefined) out.outputTokens = usage.output_tokens;
  if (usage.input_tokens !== undefined && usage.output_tokens !== undefined) {
    out.totalTokens = usage.input_tokens + usage.output_tokens;
  }
  if (usage.reasoning_tokens !== undefined) out.reasoningTokens = usage.reasoning_tokens;
  if (usage.cached_input_tokens !== undefined) out.cachedInputTokens = usage.cached_input_tokens;
  return out;
}

/** The sum of usages; a count no usage reported stays absent. */
export function totalUsage(usages: Usage[]): Usage {
  const out: Usage = {};
  for (const usage of usages) {
    for (const [key, value] of Object.entries(usage) as [keyof Usage, number | undefined][]) {
      if (typeof value === "number") out[key] = (out[key] ?? 0) + value;
    }
  }
  return out;
}

/** The usage counts, in the order the stores sum them. */
export const USAGE_KEYS = [
  "input_tokens",
  "output_tokens",
  "reasoning_tokens",
  "cached_input_tokens",
] as const;

/**
 * The usage of per-count sums a store computed over `steps` model steps (null when there were
 * none, like a run's; a count no step reported, a null sum, stays absent).
 */
export function usageOfSums(
  steps: number,
  sums: Partial<Record<keyof Usage, number | string | bigint | null>>,
): Usage | null {
  if (steps === 0) return null;
  const out: Usage = {};
  for (const key of USAGE_KEYS) {
    const value = sums[key];
    if (value !== null && value !== undefined) out[key] = Number(value);
  }
  return out;
}

/** A session's totals of per-count sums and a cost sum a store computed (see `usageOfSums`). */
export function totalsOfSums(
  row: Record<string, unknown>,
): { usage: Usage | null; cost: number | null } {
  const sums = row as Partial<Record<keyof Usage | "cost", number | string | null>>;
  return {
    usage: usageOfSums(Number(row.steps), sums),
    cost: sums.cost === null || sums.cost === undefined ? null : roundCost(Number(sums.cost)),
  };
}

/** Our finish reason of a provider's unified one (`content-filter` with raw `refusal` is a refusal). */
export function finishReasonOf(unified: string, raw?: string): FinishReason {
  switch (unified) {
    case "stop":
    case "length":
    case "other":
      return unified;
    case "tool-calls":
      return "tool_calls";
    case "content-filter":
      return raw === "refusal" ? "refusal" : "content_filter";
    default:
      return "other";
  }
}
