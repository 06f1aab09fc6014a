/**
 * The AG-UI `resume` entries of a request as the native `resume_payload`: each entry answers one
 * open interrupt of the thread (interrupts.ts names them), and a resume must answer every one.
 */
import type { RunRequest } from "../../api/schemas.ts";
import type { FieldError } from "../../errors.ts";
import { fieldError } from "../../http/kit/mod.ts";
import type { AgUiRunInput } from "./input.ts";
import type { OpenInterrupt } from "./interrupts.ts";

/** The native `resume_payload` of the request's resume entries, and where each entry went. */
export interface MappedResume {
  payload: RunRequest["resume_payload"];
  /** Index of the resume entry behind each `approvals[k]`. */
  approvals: number[];
  /** Index of the resume entry behind each `tool_results[k]`. */
  toolResults: number[];
  /** Whether the request had resume entries at all. */
  given: boolean;
}

/**
 * Maps resume entries onto `resume_payload`: an approval interrupt resolved (payload `{ approved,
 * reason }`, or nothing for "yes") or cancelled (rejected); a client tool interrupt resolved with
 * its result as payload or cancelled (an error result), unless a `tool` message of the request
 * answers it; a run-level interrupt (step limit, shutdown) needs no payload: the run continues
 * from the checkpoint. A resume must answer every open interrupt, each once.
 */
export function mapResume(
  input: AgUiRunInput,
  interrupts: readonly OpenInterrupt[],
  answeredByMessage: ReadonlySet<string>,
  fields: FieldError[],
): MappedResume {
  const out: MappedResume = { payload: null, approvals: [], toolResults: [], given: false };
  if (!input.resume) return out;
  out.given = true;
  const open = new Map(interrupts.map((o) => [o.id, o]));
  const answered = new Set<string>();
  const approvals: { tool_call_id: string; approved: boolean; reason?: string }[] = [];
  const toolResults: { tool_call_id: string; result: unknown; is_error?: boolean }[] = [];

  input.resume.forEach((entry, i) => {
    const at = `resume.${i}.interruptId`;
    const interrupt = open.get(entry.interruptId);
    if (!interrupt) {
      const known = [...open.keys()];
      fields.push(fieldError(
        at,
        "unknown_interrupt",
        known.length > 0
          ? `'${entry.interruptId}' is not an open interrupt of the thread`
          : "the thread has no open interrupts",
        { open: known },
      ));
      return;
    }
    if (answered.has(interrupt.id)) {
      fields.push(fieldError(at, "duplicate_answer", `'${interrupt.id}' is answered twice`));
      return;
    }
    answered.add(interrupt.id);
    if (interrupt.kind === "approval") {
      approvals.push({ tool_call_id: interrupt.call.tool_call_id, ...approval(entry) });
      out.approvals.push(i);
    } else if (interrupt.kind === "client_tool") {
      // The tool message is the richer answer; the entry then only acknowledges the interrupt.
      if (answeredByMessage.has(interrupt.call.tool_call_id)) return;
      toolResults.push(
        entry.status === "resolved"
          ? { tool_call_id: interrupt.call.tool_call_id, result: entry.payload ?? null }
          : {
            tool_call_id: interrupt.call.tool_call_id,
            result: entry.payload ?? "the user cancelled this tool call",
            is_error: true,
          },
      );
      out.toolResults.push(i);
    }
  });

  const missing = interrupts.filter((o) =>
    !answered.has(o.id) && !(o.kind === "client_tool" && answeredByMessage.has(o.id))
  ).map((o) => o.id);
  if (missing.length > 0) {
    fields.push(fieldError(
      "resume",
      "missing_resume",
      `a resume must answer every open interrupt; unanswered: ${missing.join(", ")}`,
      { interrupt_ids: missing },
    ));
  }
  if (approvals.length > 0 || toolResults.length > 0) {
    out.payload = {
      ...(approvals.length > 0 ? { approvals } : {}),
      ...(toolResults.length > 0 ? { tool_results: toolResults } : {}),
    };
  }
  return out;
}

/** The approval decision of a resume entry. */
function approval(entry: { status: "resolved" | "cancelled"; payload: unknown }): {
  approved: boolean;
  reason?: string;
} {
  const payload = entry.payload;
  const object = payload !== null && typeof payload === "object" && !Array.isArray(payload)
    ? payload as Record<string, unknown>
    : {};
  const reason = typeof object.reason === "string" ? object.reason : undefined;
  if (entry.status === "cancelled") {
    return { approved: false, reason: reason ?? "the user cancelled the approval" };
  }
  const approved = payload === false ? false : object.approved !== false;
  return reason !== undefined ? { approved, reason } : { approved };
}
