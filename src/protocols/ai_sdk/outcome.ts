/**
 * How a run's end reads in the AI SDK's terms: the approvals it waits for and its finish reason
 * (the `finish` chunk the encoder writes, encoder.ts, with `camelUsage` of src/api/usage.ts).
 */
import type { RunEventOf } from "../../api/events.ts";

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
