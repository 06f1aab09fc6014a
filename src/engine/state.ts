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
  /** `state_delta` (or `state_snapshot` when there was no context to patch); empty for no change. */
  events: RunEvent[];
}

/**
 * Applies a whole-context replacement or an RFC 6902 patch to `context`. A patch on a missing
 * context applies to `{}`. When the previous context was null clients hold no document a delta
 * could apply to, so the change goes out as a `state_snapshot`. Throws when a patch does not apply
 * (the context is then unchanged).
 */
export function applyStateUpdate(context: Context, update: StateUpdate): StateChange {
  let next: unknown;
  let delta: PatchOperation[];
  if ("context" in update) {
    next = structuredClone(update.context);
    delta = context === null ? [] : jsonpatch.compare(context, next as object) as PatchOperation[];
  } else {
    const base = structuredClone(context ?? {});
    // validate = true: malformed operations throw instead of half-applying.
    next = jsonpatch.applyPatch(base, update.patch as jsonpatch.Operation[], true, false)
      .newDocument;
    delta = update.patch;
  }
  if (next === null || typeof next !== "object" || Array.isArray(next)) {
    throw new Error("the state update does not leave an object as the context");
  }
  const nextContext = next as Record<string, unknown>;
  if (context === null) {
    return {
      context: nextContext,
      events: [makeEvent("state_snapshot", { context: nextContext })],
    };
  }
  return {
    context: nextContext,
    events: delta.length > 0 ? [makeEvent("state_delta", { delta })] : [],
  };
}
