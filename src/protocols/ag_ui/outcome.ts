/**
 * The `RUN_FINISHED` outcome of a finished run: what it waits for, written as AG-UI interrupts
 * (the open interrupts of interrupts.ts, whose ids a resume echoes back).
 */
import type { Interrupt, RunFinishedOutcome } from "@ag-ui/core";
import type { RunEventOf } from "../../api/events.ts";
import { type OpenInterrupt, openInterrupts } from "./interrupts.ts";

/**
 * The outcome of a finished run. A run that stopped only for client tool calls is a success with
 * `pendingToolCallIds` (AG-UI 1.0: the answers ride the next run's `tool` messages); a run that
 * waits for anything else (an approval, a step limit, a shutdown) is an interrupt, and lists the
 * client tool calls of the same stop as interrupts too, so one outcome names everything it waits
 * for.
 */
export function outcomeOf(event: RunEventOf<"run_finished">): RunFinishedOutcome {
  if (event.status === "cancelled") return { type: "cancelled" };
  if (event.status !== "interrupted") return { type: "success" };
  const open = openInterrupts(event);
  if (open.every((o) => o.kind === "client_tool")) {
    return { type: "success", pendingToolCallIds: open.map((o) => o.id) };
  }
  return { type: "interrupt", interrupts: open.map(toInterrupt) };
}

/** The AG-UI interrupt of one open interrupt. */
export function toInterrupt(open: OpenInterrupt): Interrupt {
  if (open.kind === "run") {
    return {
      id: open.id,
      reason: open.reason,
      ...(open.message ? { message: open.message } : {}),
    };
  }
  const { call } = open;
  if (open.kind === "approval") {
    return {
      id: open.id,
      reason: "tool_approval",
      message: `approve the call of the tool '${call.tool_name}' with arguments ${
        JSON.stringify(call.arguments)
      }?`,
      toolCallId: call.tool_call_id,
      responseSchema: APPROVAL_RESPONSE_SCHEMA,
    };
  }
  return {
    id: open.id,
    reason: "client_tool",
    message: `run the client tool '${call.tool_name}' and resume with its result`,
    toolCallId: call.tool_call_id,
  };
}

/** The `payload` a `resolved` resume entry of an approval may carry (none means approved). */
const APPROVAL_RESPONSE_SCHEMA = {
  type: "object",
  properties: {
    approved: { type: "boolean", default: true },
    reason: { type: "string" },
  },
};
