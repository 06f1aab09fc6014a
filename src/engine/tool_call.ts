/**
 * One call of a server tool inside a run: the tool's emits go out live as `custom` events, its
 * state update is applied to the run's context, and a tool that breaks its never-rejects contract
 * still gives the model an error result instead of failing the run.
 */
import { makeEvent, type RunEvent } from "../api/events.ts";
import type { ToolCall } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "../tools/mod.ts";
import { withPushes } from "./async.ts";
import { errorDetail } from "./run_error.ts";
import { applyStateUpdate, type Context, type StateChange } from "./state.ts";
import type { RunIds } from "./types.ts";

/** What a server tool call gives the run: the tool message's value and the state change. */
export interface ServerToolResult {
  /** The result for the model. */
  result: unknown;
  /** Whether the result is an error. */
  is_error: boolean;
  /** The tool's state update applied to the run's context, when it made one that applies. */
  change?: StateChange;
}

/** Where a server tool is called: the run, its context, its signal and its logger. */
export interface ServerToolScope {
  ids: RunIds;
  /** The run's context now (the tool gets a copy). */
  context: Context;
  signal: AbortSignal;
  log: Logger;
}

/**
 * Calls a server tool, yielding its emits live; returns its result and its state change (a state
 * update that does not apply makes the result an error saying so).
 */
export async function* callServerTool(
  tool: Tool,
  call: ToolCall,
  scope: ServerToolScope,
): AsyncGenerator<RunEvent, ServerToolResult> {
  const { tenant_id, session_id, run_id } = scope.ids;
  const outcome = yield* withPushes<RunEvent, ToolOutcome>((push) => {
    const ctx: ToolCallContext = {
      tenant_id,
      session_id,
      run_id,
      tool_call_id: call.id,
      context: scope.context === null ? null : structuredClone(scope.context),
      emit: (name, value) => push(makeEvent("custom", { name: String(name), value })),
      signal: scope.signal,
    };
    return callTool(tool, call.arguments, ctx, scope.log);
  }, scope.signal);

  if (outcome.is_error) {
    // The model gets the error and may recover; the person running the server should see it too.
    scope.log.warn("tool failed", {
      tool: tool.name,
      tool_call_id: call.id,
      error: clip(
        typeof outcome.result === "string" ? outcome.result : JSON.stringify(outcome.result),
      ),
    });
  }
  if (!outcome.state) return { result: outcome.result, is_error: outcome.is_error };
  try {
    const change = applyStateUpdate(scope.context, outcome.state);
    return { result: outcome.result, is_error: outcome.is_error, change };
  } catch (error) {
    return {
      result: `the tool ran but its state update could not be applied: ${errorText(error)}`,
      is_error: true,
    };
  }
}

/** Calls a tool; a tool that breaks its never-rejects contract still yields an error outcome. */
async function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  log: Logger,
): Promise<ToolOutcome> {
  try {
    return await tool.call(args, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    log.error("tool broke its contract and threw", {
      tool: tool.name,
      tool_call_id: ctx.tool_call_id,
      error: errorDetail(error),
    });
    return { result: `the tool '${tool.name}' failed unexpectedly`, is_error: true };
  }
}

/** A tool's error as a log field: its first 500 characters. */
function clip(text: string | undefined): string | undefined {
  return text !== undefined && text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
