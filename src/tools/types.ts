/**
 * The tool seam: a server-side tool call with its live context, and what it gives back.
 */
import type { PatchOperation } from "../api/schemas.ts";

/** What a tool sees while it runs. */
export interface ToolCallContext {
  /** The run's tenant. */
  tenant_id: string;
  /** The run's session. */
  session_id: string;
  /** The run. */
  run_id: string;
  /** The call's id. */
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
  /** True when the call failed (`result` then describes the failure). */
  is_error: boolean;
  /** A change to the agent state the tool asks for. */
  state?: StateUpdate;
}

/** A server-side tool, ready to call. */
export interface Tool {
  /** The tool's name (the manifest label). */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Record<string, unknown>;
  /** A human must approve each call before it runs. */
  readonly requires_approval: boolean;
  /**
   * Safe to run twice: a call in flight when its replica was lost is run again when the run
   * resumes (manifest `idempotent`, MCP `idempotentHint`); absent means no.
   */
  readonly idempotent?: boolean;
  /** Runs one call; a failure is an outcome with `is_error`, never a throw. */
  call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome>;
  /** Starts what calls need ahead of them (sandbox processes); resolves when it is ready. */
  prepare?(): Promise<void>;
  /** Stops everything the tool started; calls after it fail with an error outcome. */
  close?(): Promise<void>;
}

/** A Tool that owns processes: started ahead of the calls by `prepare`, stopped by `close`. */
export interface ManagedTool extends Tool, AsyncDisposable {
  /** Starts the processes the calls will use. */
  prepare(): Promise<void>;
  /** Stops them. */
  close(): Promise<void>;
}
