/**
 * The tool seam: a server-side tool call with its live context, and what it gives back.
 */
import type { PatchOperation } from "../api/schemas.ts";

/** What a tool sees while it runs. */
export interface ToolCallContext {
  tenant_id: string;
  session_id: string;
  run_id: string;
  tool_call_id: string;
  /** The agent state at the time of the call. */
  context: Record<string, unknown> | null;
  /** Sends a live custom event to the run's clients (not persisted). */
  emit(name: string, value: unknown): void;
  /** Aborted when the run is cancelled; the tool is stopped. */
  signal: AbortSignal;
}

/** A state update a tool returns: a whole new context, or patch operations on it. */
export type StateUpdate =
  | { context: Record<string, unknown> }
  | { patch: PatchOperation[] };

/** The outcome of one tool call. A failure is an outcome with `is_error`, never a throw. */
export interface ToolOutcome {
  /** What the model sees (the return value, or an error description). */
  result: unknown;
  is_error: boolean;
  state?: StateUpdate;
}

/** A server-side tool, ready to call. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly requires_approval: boolean;
  call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome>;
  /** Starts what calls need ahead of them (sandbox processes); resolves when it is ready. */
  prepare?(): Promise<void>;
  /** Stops everything the tool started; calls after it fail with an error outcome. */
  close?(): Promise<void>;
}

/** A Tool that owns processes: started ahead of the calls by `prepare`, stopped by `close`. */
export interface ManagedTool extends Tool, AsyncDisposable {
  prepare(): Promise<void>;
  close(): Promise<void>;
}
