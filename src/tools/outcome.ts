/**
 * Turning what a tool returned into a `ToolOutcome`: the shared last step of the JavaScript and
 * Python runners, so both languages follow one rule for results, state updates and errors.
 */
import jsonpatch from "fast-json-patch";
import { z } from "zod";
import { hasMarker, WITH_STATE_KEY, WITH_STATE_TAG } from "./library.ts";
import type { StateUpdate, ToolOutcome } from "./types.ts";

/**
 * An error outcome. Its result is the message alone: the engine stores a failed call's result as
 * `{ error: result }` (src/engine/conversation.ts), the one place that shape is made.
 */
export function toolError(message: string): ToolOutcome {
  return { result: message, is_error: true };
}

const PointerSchema = z.string().refine((p) => p === "" || p.startsWith("/"), {
  message: "must be a JSON Pointer (empty or starting with '/')",
});

/** One RFC 6902 operation; the shape of `PatchOperation` in src/api/schemas.ts. */
const PatchOperationSchema = z.discriminatedUnion("op", [
  z.object({ op: z.enum(["add", "replace", "test"]), path: PointerSchema, value: z.unknown() })
    .strict().refine((o) => Object.hasOwn(o, "value"), { message: "needs a value" }),
  z.object({ op: z.literal("remove"), path: PointerSchema }).strict(),
  z.object({ op: z.enum(["move", "copy"]), from: PointerSchema, path: PointerSchema }).strict(),
]);

const StateUpdateSchema = z.union([
  z.object({ context: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ patch: z.array(PatchOperationSchema) }).strict(),
]);

/**
 * Checks a tool's state update against the context it was given. A patch must apply to that
 * context (on a copy, with fast-json-patch's validation) and leave an object, so a broken patch
 * fails this call, where the tool author sees it, rather than later in the engine.
 */
export function checkStateUpdate(
  update: unknown,
  context: Record<string, unknown> | null,
): { ok: true; state: StateUpdate } | { ok: false; error: string } {
  const parsed = StateUpdateSchema.safeParse(update);
  if (!parsed.success) {
    return {
      ok: false,
      error:
        "invalid state update: expected { context: {...} } or { patch: [RFC 6902 operations] }" +
        `: ${z.prettifyError(parsed.error).replaceAll("\n", " ")}`,
    };
  }
  const state = parsed.data as StateUpdate;
  if ("patch" in state) {
    // Applied to a copy, the way the engine will apply it (a null context counts as `{}`).
    let next: unknown;
    try {
      next = jsonpatch.applyPatch(
        structuredClone(context ?? {}),
        state.patch as jsonpatch.Operation[],
        true,
        true,
      ).newDocument;
    } catch (err) {
      const index = (err as { index?: number }).index;
      const op = index === undefined ? undefined : state.patch[index];
      const where = op ? ` (operation ${index}: ${op.op} ${op.path})` : "";
      const why = err instanceof Error ? err.message.split("\n")[0] : String(err);
      return {
        ok: false,
        error: `invalid state update: the patch does not apply to the context${where}: ${why}`,
      };
    }
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      return {
        ok: false,
        error: "invalid state update: the patch leaves a context that is not an object",
      };
    }
  }
  return { ok: true, state };
}

/**
 * The outcome of a value a tool returned (already known to be JSON): a plain value is the
 * result; a value tagged by `withState` / `with_state` is a result plus a checked state update.
 */
export function interpretReturn(
  value: unknown,
  context: Record<string, unknown> | null,
): ToolOutcome {
  if (!hasMarker(value)) return { result: value ?? null, is_error: false };
  if (value[WITH_STATE_KEY] !== WITH_STATE_TAG) {
    return toolError(
      `the result uses the reserved key '${WITH_STATE_KEY}' with an unknown value; ` +
        "return a state update only through withState / with_state",
    );
  }
  const checked = checkStateUpdate(value.state, context);
  if (!checked.ok) return toolError(checked.error);
  return { result: value.result ?? null, is_error: false, state: checked.state };
}

/** A readable message of any thrown value, without terminal colour codes. */
export function errorMessage(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return stripAnsi(text);
}

/** Removes ANSI colour sequences (Deno colours module-load errors when stderr is a terminal). */
export function stripAnsi(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}
