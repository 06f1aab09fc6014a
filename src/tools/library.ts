/**
 * The tool library: what a server-side tool receives and how it hands back a state update.
 *
 * Tools get everything through their `ctx` argument, so a tool module needs no runtime import of
 * agentd (a JavaScript tool runs in a process that may read nothing but its own directory, and only
 * while it loads). TypeScript authors may `import type` from this file for the signatures: type
 * imports are erased before the module runs. See docs/tools.md.
 */
import type { StateUpdate } from "./types.ts";

/** The key that marks a tool's return value as "result plus state update" (see `withState`). */
export const WITH_STATE_KEY = "$agentd";

/** The value of `WITH_STATE_KEY` in a tagged return value. */
export const WITH_STATE_TAG = "with_state";

/**
 * A tool's return value that also updates the agent state. The marker key keeps it apart from a
 * plain result that happens to have `result` and `state` fields.
 */
export interface WithState<T = unknown> {
  /** The marker the runners recognise. */
  [WITH_STATE_KEY]: typeof WITH_STATE_TAG;
  /** What the model sees. */
  result: T;
  /** A whole new context (`{ context }`) or RFC 6902 operations rooted at it (`{ patch }`). */
  state: StateUpdate;
}

/** Wraps a tool result with a state update; JavaScript tools get the same function as `ctx.withState`. */
export function withState<T>(result: T, update: StateUpdate): WithState<T> {
  return { [WITH_STATE_KEY]: WITH_STATE_TAG, result, state: update };
}

/** Whether a value carries the `$agentd` marker key (tagged or mistagged: both are ours to judge). */
export function hasMarker(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.hasOwn(value, WITH_STATE_KEY);
}

/** The `ctx` a JavaScript/TypeScript tool function receives as its second argument. */
export interface JsToolContext {
  /** A copy of the agent state (`context`) at the time of the call; changing it changes nothing. */
  readonly context: Record<string, unknown> | null;
  /** The run's tenant. */
  readonly tenant_id: string;
  /** The run's session. */
  readonly session_id: string;
  /** The run. */
  readonly run_id: string;
  /** The call's id. */
  readonly tool_call_id: string;
  /**
   * Sends a live CUSTOM event (`name`, `value`) to the run's clients; not persisted. `value` must be
   * JSON (throws a TypeError otherwise).
   */
  emit(name: string, value: unknown): void;
  /** Returns `result` for the model together with a state update for the run. */
  withState<T>(result: T, update: StateUpdate): WithState<T>;
}

/** The signature of a JavaScript/TypeScript tool function (a named or the default export). */
export type JsToolFunction<A = Record<string, unknown>> = (
  args: A,
  ctx: JsToolContext,
) => unknown;
