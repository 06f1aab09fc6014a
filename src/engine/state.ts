/**
 * The agent state (`context`) and its updates: applying a tool's state update and describing the
 * change as the events clients use to mirror it.
 */
import jsonpatch from "fast-json-patch";
import type { PatchOperation } from "../api/schemas.ts";
import { makeEvent, type RunEvent } from "../api/events.ts";
import type { StateUpdate } from "../tools/mod.ts";

/** Agent state: the `context` object, or null when the session has none. */
export type Context = Record<string, unknown> | null;

/** The result of applying a state update. */
export interface StateChange {
  context: Record<string, unknown>;
  /**
   * The events describing the change, stamped when called (so after the tool's result that
   * carried it): a `state_delta`, preceded by a `state_snapshot` of `{}` when there was no
   * context the client could hold; none for no change.
   */
  events(): RunEvent[];
}

/**
 * Applies a whole-context replacement or an RFC 6902 patch to `context`. A patch on a missing
 * context applies to `{}`. The change always goes out as a `state_delta` (the spec: emitted when
 * tools return state updates); when the previous context was null clients hold no document it
 * could apply to, so an empty `state_snapshot` comes first. Throws when a patch does not apply
 * (the context is then unchanged).
 */
export function applyStateUpdate(context: Context, update: StateUpdate): StateChange {
  const base = context ?? {};
  let next: unknown;
  let delta: PatchOperation[];
  if ("context" in update) {
    next = structuredClone(update.context);
    delta = next !== null && typeof next === "object" && !Array.isArray(next)
      ? jsonpatch.compare(base, next as object) as PatchOperation[]
      : [];
  } else {
    // validate = true: malformed operations throw instead of half-applying.
    next = jsonpatch.applyPatch(
      structuredClone(base),
      update.patch as jsonpatch.Operation[],
      true,
      false,
    )
      .newDocument;
    delta = update.patch;
  }
  if (next === null || typeof next !== "object" || Array.isArray(next)) {
    throw new Error("the state update does not leave an object as the context");
  }
  const nextContext = next as Record<string, unknown>;
  return {
    context: nextContext,
    events: () => [
      ...(context === null ? [makeEvent("state_snapshot", { context: {} })] : []),
      ...(delta.length > 0 ? [makeEvent("state_delta", { delta })] : []),
    ],
  };
}
