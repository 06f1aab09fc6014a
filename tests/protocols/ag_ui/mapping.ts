/**
 * What the request-mapping tests share: the mapping as the run route does it (read the input, then
 * map it onto a thread), the fields of a 422, AG-UI tool calls and open interrupts to answer.
 */
import assert from "node:assert/strict";
import { ApiError } from "../../../src/errors.ts";
import { parseRunInput } from "../../../src/protocols/ag_ui/input.ts";
import type { OpenInterrupt } from "../../../src/protocols/ag_ui/interrupts.ts";
import {
  type MappedRun,
  NEW_THREAD,
  type ThreadView,
  toRunRequest,
} from "../../../src/protocols/ag_ui/request.ts";

/** The fields of a 422, as `{ field: [codes] }`. */
export function fieldsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 422);
    assert.equal(err.code, 422000);
    return Object.fromEntries(err.fields!.map((f) => [f.field, f.errors.map((e) => e.code)]));
  }
  assert.fail("expected a 422");
}

/** A request body read and mapped onto `thread`, as the run route does. */
export const map = (body: unknown, thread: ThreadView = NEW_THREAD): MappedRun =>
  toRunRequest(parseRunInput(body), thread);

/** An AG-UI tool call (arguments as a JSON string). */
export function tc(id: string, name: string, args: string) {
  return { id, type: "function", function: { name, arguments: args } };
}

/** An approval the thread waits for. */
export const approval: OpenInterrupt = {
  id: "call_a",
  kind: "approval",
  call: { tool_call_id: "call_a", tool_name: "delete_file", arguments: {}, kind: "approval" },
};
/** A client tool call the thread waits for. */
export const clientTool: OpenInterrupt = {
  id: "call_c",
  kind: "client_tool",
  call: { tool_call_id: "call_c", tool_name: "ask_user", arguments: {}, kind: "client_tool" },
};
/** A run-level interrupt: the step limit. */
export const stepLimit: OpenInterrupt = {
  id: "r0:max_steps",
  kind: "run",
  reason: "max_steps",
};
