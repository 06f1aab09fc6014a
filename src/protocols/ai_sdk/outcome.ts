/**
 * How a run's end reads in the AI SDK's terms: the approvals it waits for, its finish reason, and
 * its token usage in the AI SDK's names (the `finish` chunk the encoder writes, encoder.ts).
 */
import type { RunEventOf } from "../../api/events.ts";
import type { Usage } from "../../api/usage.ts";

/** The calls an `interrupt_payload.pending` list holds for an approval. */
export function approvalCalls(pending: unknown): { tool_call_id: string }[] {
  if (!Array.isArray(pending)) return [];
  return pending.filter((p): p is { tool_call_id: string } =>
    p !== null && typeof p === "object" && p.kind === "approval" &&
    typeof p.tool_call_id === "string"
  );
}

/** The AI SDK finish reason of a run's end. */
export function finishReason(
  event: RunEventOf<"run_finished">,
): "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other" {
  switch (event.status) {
    case "completed":
      return completedReason(event.finish_reason);
    case "interrupted":
      return event.interrupt_payload?.reason === "tool_calls" ? "tool-calls" : "other";
    case "failed":
      return "error";
    default:
      return "other";
  }
}

/** A completed run's reason: why the model stopped in its last step (cut, filtered, refused). */
function completedReason(
  reason: RunEventOf<"run_finished">["finish_reason"],
): "stop" | "length" | "content-filter" | "other" {
  if (reason === "length" || reason === "other") return reason;
  if (reason === "content_filter" || reason === "refusal") return "content-filter";
  return "stop";
}

/** Native usage in the AI SDK's names (counts the provider did not report absent). */
export function aiSdkUsage(usage: Usage): Record<string, number> {
  const out: Record<string, number> = {};
  if (usage.input_tokens !== undefined) out.inputTokens = usage.input_tokens;
  if (usage.output_tokens !== undefined) out.outputTokens = usage.output_tokens;
  if (usage.input_tokens !== undefined && usage.output_tokens !== undefined) {
    out.totalTokens = usage.input_tokens + usage.output_tokens;
  }
  if (usage.reasoning_tokens !== undefined) out.reasoningTokens = usage.reasoning_tokens;
  if (usage.cached_input_tokens !== undefined) out.cachedInputTokens = usage.cached_input_tokens;
  return out;
}
