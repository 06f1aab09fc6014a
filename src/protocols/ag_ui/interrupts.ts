/**
 * The one rule that names what a stopped run waits for, shared by both directions of the add-on:
 * the encoder announces these interrupts in `RUN_FINISHED`, and the request mapping accepts resume
 * entries for exactly these ids. Keeping the rule in one place is what makes an `interruptId`
 * the client echoes back mean the same thing on the next run.
 */
import type { RunError, RunStatus } from "../../api/schemas.ts";

/** Why a tool call waits, as the engine records it in `interrupt_payload.pending[].kind`. */
export type PendingKind = "client_tool" | "approval";

/** A tool call a stopped run waits on (the engine's `interrupt_payload.pending[]` entry). */
export interface PendingCall {
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  kind: PendingKind;
}

/** One thing a stopped run waits for, before it is written in AG-UI terms. */
export type OpenInterrupt =
  | { id: string; kind: PendingKind; call: PendingCall }
  | { id: string; kind: "run"; reason: string; message?: string };

/**
 * The pending tool calls listed in an `interrupt_payload` (or a checkpoint's
 * `pending_tool_calls`); entries of another shape are skipped rather than trusted.
 */
export function pendingCalls(raw: unknown): PendingCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((entry): PendingCall[] => {
    if (entry === null || typeof entry !== "object") return [];
    const { tool_call_id, tool_name, arguments: args, kind } = entry as Record<string, unknown>;
    if (typeof tool_call_id !== "string" || typeof tool_name !== "string") return [];
    if (kind !== "client_tool" && kind !== "approval") return [];
    const argsObject = args !== null && typeof args === "object" && !Array.isArray(args)
      ? args as Record<string, unknown>
      : {};
    return [{ tool_call_id, tool_name, arguments: argsObject, kind }];
  });
}

/**
 * What an `interrupted` run waits for. A tool-call interrupt is named by its tool call id (unique
 * within the run, and the id a UI already holds from the streamed `TOOL_CALL_START`); any other
 * interrupt (`max_steps`, `shutdown`, a lost replica) by `<run_id>:<reason>`, which no provider's
 * tool call id looks like.
 */
export function openInterrupts(run: {
  run_id: string;
  status: RunStatus;
  interrupt_payload: Record<string, unknown> | null;
  error?: RunError | null;
}): OpenInterrupt[] {
  if (run.status !== "interrupted") return [];
  const payload = run.interrupt_payload;
  if (payload?.reason === "tool_calls") {
    const calls = pendingCalls(payload.pending);
    if (calls.length > 0) {
      return calls.map((call) => ({ id: call.tool_call_id, kind: call.kind, call }));
    }
  }
  const reason = typeof payload?.reason === "string"
    ? payload.reason
    : run.error?.code ?? "interrupted";
  return [{
    id: runInterruptId(run.run_id, reason),
    kind: "run",
    reason,
    message: run.error?.message ?? runInterruptMessage(reason, payload),
  }];
}

/** The id of a run-level (not tool-call) interrupt. */
export function runInterruptId(runId: string, reason: string): string {
  return `${runId}:${reason}`;
}

function runInterruptMessage(
  reason: string,
  payload: Record<string, unknown> | null,
): string {
  if (reason === "max_steps") {
    const limit = typeof payload?.max_steps === "number" ? ` of ${payload.max_steps}` : "";
    return `the run reached its limit${limit} model steps; resume to let the agent continue`;
  }
  return "the run stopped before it finished; resume to continue from its last checkpoint";
}
