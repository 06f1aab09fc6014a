/**
 * The protocol between the server and a tool's sandbox process (JavaScript and Python alike), and
 * what a call's end looks like before each language words it for the model.
 *
 * The process is started ahead of the call (see pool.ts). It loads the tool module, says it is
 * ready, then reads one request line on stdin and answers on stdout. Protocol lines start with
 * the record separator `\x1e` (runners write `\n\x1e{json}\n`, so a protocol line always starts
 * a line even after output of the tool that did not end one):
 *
 * - `{"type":"ready"}` once the module has loaded;
 * - after the request: any number of `{"type":"emit","name":...,"value":...}`, then one
 *   `{"type":"result","value":...}` or `{"type":"error","error":"...","stage"?,"permission"?}`;
 * - a load failure is an `error` instead of `ready`.
 *
 * Other stdout lines are the tool's own output (JavaScript's console) or, for a `strict` runner
 * whose stdout is private (Python), a protocol error. The runners are js_host.ts and
 * python_runner.py; the server's end is process.ts.
 */
import { WITH_STATE_KEY, WITH_STATE_TAG } from "../library.ts";

/** How to start one sandbox process and what it may send. */
export interface HostSpec {
  /** The program to start (`/bin/sh` for JavaScript, bwrap or the interpreter for Python). */
  command: string;
  /** Its arguments. */
  args: string[];
  /** Its whole environment (nothing of the server's is inherited). */
  env: Record<string, string>;
  /** Its working directory (the tool's directory). */
  cwd: string;
  /** Whether the process leads a process group that is killed as a whole (Python's children). */
  group: boolean;
  /** Whether stdout lines that are not protocol lines are an error (else they are output). */
  strict: boolean;
  /** Milliseconds a started process may take to load the module before it is killed. */
  load_timeout: number;
  /** Limits the server enforces whatever the runner does. */
  limits: { result_bytes: number; emits: number; emit_bytes: number };
  /** Characters of output (stderr, stray stdout) kept for error messages (the end). */
  output_tail: number;
}

/** How a call (or a load) ended, before each language words it for the model. */
export type HostEnd =
  | { kind: "result"; value: unknown }
  | {
    kind: "error";
    message: string;
    stage?: string;
    permission: boolean;
    output: string;
  }
  | { kind: "timeout"; loading: boolean; output: string }
  | { kind: "cancelled" }
  /** No process slot came free in time (./slots.ts): the call never started. */
  | { kind: "busy"; message: string }
  | { kind: "limit"; message: string; output: string }
  | { kind: "protocol"; line: string; output: string }
  | { kind: "exit"; code: number; signal: string | null; output: string }
  | { kind: "spawn_failed"; error: unknown }
  | { kind: "closed" };

/** What a call needs from the run: where emits go and what cancels it. */
export interface HostCallContext {
  /** Passes a live event of the tool on to the run. */
  emit(name: string, value: unknown): void;
  /** Aborted when the run is cancelled: the process is killed. */
  signal: AbortSignal;
}

/**
 * The marker of a "result plus state update" value (library.ts), as both runners get it in their
 * configuration: they build such values for the tool, and the server recognises them.
 */
export const WITH_STATE_MARKER: { key: string; tag: string } = {
  key: WITH_STATE_KEY,
  tag: WITH_STATE_TAG,
};

/** The record separator that starts every protocol line. */
export const PROTOCOL_MARK = 0x1e;

/** One protocol line's message (after the mark), as a runner sends it. */
export type Message =
  | { type: "ready" }
  | { type: "emit"; name: string; value: unknown }
  | { type: "result"; value: unknown }
  | { type: "error"; error: string; stage?: string; permission?: boolean };

/** The message of a protocol line's JSON (without the mark), or null when it is not one. */
export function parseMessage(bytes: Uint8Array): Message | null {
  let m: unknown;
  try {
    m = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (typeof m !== "object" || m === null) return null;
  const r = m as Record<string, unknown>;
  switch (r.type) {
    case "ready":
      return r as Message;
    case "emit":
      return typeof r.name === "string" && Object.hasOwn(r, "value") ? r as Message : null;
    case "result":
      return Object.hasOwn(r, "value") ? r as Message : null;
    case "error":
      return typeof r.error === "string" ? r as Message : null;
    default:
      return null;
  }
}
