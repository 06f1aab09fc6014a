/**
 * Readers of the AI SDK stream parts that carry more than text: provider metadata (merged over a
 * block's start, deltas and end), usage, warnings and a refusal's explanation.
 */
import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from "@ai-sdk/provider";
import { isRecord } from "./failures.ts";
import type { ModelUsage, ProviderMetadata } from "./types.ts";

/** `b` merged over `a`, one provider key at a time (a signature delta adds to a block's start). */
export function mergeMetadata(
  a: ProviderMetadata | undefined,
  b: ProviderMetadata | undefined,
): ProviderMetadata | undefined {
  if (!b) return a;
  const out: ProviderMetadata = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (isRecord(value)) out[key] = { ...out[key], ...value };
  }
  return out;
}

/** Metadata worth keeping: undefined when it holds no key with a value. */
export function keptMetadata(meta: ProviderMetadata | undefined): ProviderMetadata | undefined {
  if (!meta) return undefined;
  const out: ProviderMetadata = {};
  for (const [key, value] of Object.entries(meta)) {
    const fields = Object.entries(value).filter(([, v]) => v !== undefined && v !== null);
    if (fields.length > 0) out[key] = Object.fromEntries(fields);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The usage the provider reported, in our field names; a field it did not report is absent. */
export function usageOf(usage: LanguageModelV4Usage): ModelUsage {
  const out: ModelUsage = {};
  const set = (key: keyof ModelUsage, value: number | undefined) => {
    if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  };
  set("input_tokens", usage.inputTokens.total);
  set("output_tokens", usage.outputTokens.total);
  set("reasoning_tokens", usage.outputTokens.reasoning);
  set("cached_input_tokens", usage.inputTokens.cacheRead);
  return out;
}

type Warning = Extract<LanguageModelV4StreamPart, { type: "stream-start" }>["warnings"][number];

/** A provider warning as one line of text. */
export function warningText(w: Warning): string {
  switch (w.type) {
    case "unsupported":
    case "compatibility":
      return `${w.type}: ${w.feature}${w.details ? ` (${w.details})` : ""}`;
    case "deprecated":
      return `deprecated: ${w.setting}: ${w.message}`;
    default:
      return `${w.type}: ${"message" in w ? String(w.message) : JSON.stringify(w)}`;
  }
}

/** The explanation a provider gave for a refusal (Anthropic's `stop_details.explanation`). */
export function refusalExplanation(meta: ProviderMetadata | undefined): string | undefined {
  for (const value of Object.values(meta ?? {})) {
    const details = value.stopDetails;
    if (isRecord(details) && typeof details.explanation === "string") return details.explanation;
  }
  return undefined;
}
