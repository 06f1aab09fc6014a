/**
 * The bootstrap of a JavaScript tool's sandbox process: `deno run ... <this file as a data: URL>
 * <config>` (sources.ts embeds it as text, so no file is read at run time and `deno compile`
 * needs nothing extra). It is TypeScript that the tool process's `deno` runs directly; it must be
 * self-contained: a data: URL cannot resolve an import.
 *
 * It loads the tool module, revokes what loading needed, says `ready`, reads one request, calls
 * the function and answers; protocol in protocol.ts. `Deno.args[0]` is the JSON `HostConfig`
 * (javascript_tool.ts makes it); the request line is a `HostRequest`.
 *
 * Values cross as JSON text made here, so a lossy value (a Map, a Date, NaN) is refused where the
 * path to it is known instead of being flattened silently, and the limits are checked where the
 * tool can still see the error. The server checks the limits again: the tool runs in this realm
 * and could bypass anything here, but only for its own call.
 */

/** The process's configuration, `Deno.args[0]`. */
interface HostConfig {
  /** The tool module (a file: URL). */
  module_url: string;
  /** The export to call (`default` when the manifest names none). */
  function_name: string;
  /** Directories readable only while the module loads. */
  revoke_read: string[];
  /** The call's limits, checked here where the tool sees the error. */
  limits: { result_bytes: number; emits: number; emit_bytes: number };
  /** The marker of a "result plus state update" value (library.ts: `WITH_STATE_KEY`/`_TAG`). */
  with_state: { key: string; tag: string };
}

/** The one request line the server sends. */
interface HostRequest {
  args: unknown;
  context: unknown;
  tenant_id: string;
  session_id: string;
  run_id: string;
  tool_call_id: string;
}

/** A tool function as this bootstrap calls it. */
type ToolFunction = (args: unknown, ctx: unknown) => unknown;

// Captured before the tool module loads: the tool runs in this realm and could replace them.
const config: HostConfig = JSON.parse(Deno.args[0]);
const stdout = Deno.stdout;
const stdin = Deno.stdin;
const exit: (code?: number) => never = Deno.exit;
const revoke = Deno.permissions.revokeSync.bind(Deno.permissions);
const stringify = JSON.stringify;
const parse = JSON.parse;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NotCapable = Deno.errors.NotCapable;
const MARKER_KEY = config.with_state.key;
const MARKER_TAG = config.with_state.tag;
const limits = config.limits;

// One protocol line; the leading newline ends any line of output the tool left unfinished.
function sendLine(text: string): void {
  const bytes = encoder.encode("\n\x1e" + text + "\n");
  let at = 0;
  while (at < bytes.length) at += stdout.writeSync(bytes.subarray(at));
}

function kindOf(value: unknown): string {
  if (typeof value !== "object") return typeof value;
  const name = value!.constructor && value!.constructor.name;
  return name ? "a " + name : "an object without a plain prototype";
}

// The first thing in value that JSON cannot carry faithfully, as "path is what", or null.
function jsonProblem(value: unknown, path: string, stack: unknown[]): string | null {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value)
        ? null
        : path + " is " + value + ", which JSON cannot represent";
    case "object": {
      if (stack.includes(value)) return path + " is a circular reference";
      stack.push(value);
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            if (value[i] === undefined) return path + "[" + i + "] is undefined";
            const p = jsonProblem(value[i], path + "[" + i + "]", stack);
            if (p) return p;
          }
          return null;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          return path + " is " + kindOf(value) + ", not a plain object";
        }
        for (const [key, item] of Object.entries(value)) {
          if (item === undefined) continue; // dropped, as JSON.stringify does
          const p = jsonProblem(item, path + "." + key, stack);
          if (p) return p;
        }
        return null;
      } finally {
        stack.pop();
      }
    }
    case "undefined":
      return path + " is undefined, which JSON cannot represent";
    default:
      return path + " is a " + typeof value + ", which JSON cannot represent";
  }
}

function toJson(value: unknown, what: string): string {
  if (value === undefined) return "null"; // a tool that returns nothing returns null
  const root = what.split(" ").pop()!;
  const problem = jsonProblem(value, root, []);
  if (problem) {
    throw new TypeError(
      what + " is not JSON-serializable: " + problem +
        "; use plain objects, arrays, strings, finite numbers, booleans and null",
    );
  }
  return stringify(value);
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.name + ": " + err.message;
  try {
    return String(err);
  } catch {
    return "a value that cannot be shown";
  }
}

// Deno reports a missing grant as NotCapable, or as a TypeError while loading a module.
function isPermissionError(err: unknown): boolean {
  return err instanceof NotCapable ||
    (err instanceof Error &&
      (/^Requires [a-z]+ access/.test(err.message) ||
        /--no-remote is specified/.test(err.message)));
}

let stage = "load";
let settled = false;
function fail(at: string, err: unknown): void {
  if (settled) return;
  settled = true;
  sendLine(
    stringify({
      type: "error",
      stage: at,
      error: describe(err),
      permission: isPermissionError(err),
    }),
  );
  exit(0);
}

// A stray rejection or throw fails the call (or the load) instead of printing and going on.
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  fail(stage, event.reason);
});
globalThis.addEventListener("error", (event) => {
  event.preventDefault();
  fail(stage, event.error ?? event.message);
});

async function readRequest(): Promise<HostRequest> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const buffer = new Uint8Array(65536);
  for (;;) {
    const n = await stdin.read(buffer);
    if (n === null) exit(1); // the server is gone
    const chunk = buffer.slice(0, n);
    const nl = chunk.indexOf(10);
    chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
    length += nl < 0 ? n : nl;
    if (nl >= 0) break;
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return parse(decoder.decode(bytes));
}

// Whatever the tool does, the end of stdin means the server is gone: so is this process.
async function watchServer(): Promise<void> {
  const buffer = new Uint8Array(1024);
  try {
    while ((await stdin.read(buffer)) !== null) { /* nothing else comes */ }
  } catch { /* closed */ }
  exit(1);
}

let fn: ToolFunction | undefined;
try {
  const mod: Record<string, unknown> = await import(config.module_url);
  const name = config.function_name;
  const exported = mod[name];
  if (typeof exported === "function") fn = exported as ToolFunction;
  else {
    const list = Object.keys(mod).join(", ") || "nothing";
    stage = "export";
    fail(
      "export",
      (exported === undefined
        ? (name === "default"
          ? "the module has no default export"
          : "the module has no export named '" + name + "'")
        : "the export '" + name + "' is " + typeof exported + ", not a function") +
        " (it exports: " + list + ")",
    );
  }
  // The module's directory was readable only so the module could load.
  for (const path of config.revoke_read) revoke({ name: "read", path });
} catch (err) {
  fail("load", err);
}

sendLine('{"type":"ready"}');
const req = await readRequest();
watchServer();
stage = "call";

let emits = 0;
let emitBytes = 0;
const ctx = Object.freeze({
  context: req.context,
  tenant_id: req.tenant_id,
  session_id: req.session_id,
  run_id: req.run_id,
  tool_call_id: req.tool_call_id,
  emit(name: string, value: unknown): void {
    if (typeof name !== "string" || name === "") {
      throw new TypeError("emit: name must be a non-empty string");
    }
    if (settled) return;
    const json = toJson(value, "emit: value");
    const size = encoder.encode(json).length;
    if (emits + 1 > limits.emits) {
      throw new RangeError(
        "emit: this call has sent its " + limits.emits + " live events (limits.emits)",
      );
    }
    if (emitBytes + size > limits.emit_bytes) {
      throw new RangeError(
        "emit: this call's live events would exceed " + limits.emit_bytes +
          " bytes (limits.emit_bytes)",
      );
    }
    emits += 1;
    emitBytes += size;
    sendLine('{"type":"emit","name":' + stringify(name) + ',"value":' + json + "}");
  },
  withState(result: unknown, update: unknown): Record<string, unknown> {
    return { [MARKER_KEY]: MARKER_TAG, result, state: update };
  },
});

let value: unknown;
try {
  value = await fn!(req.args, ctx);
} catch (err) {
  fail("call", err);
}
stage = "result";
let json = "";
try {
  json = toJson(value, "result");
} catch (err) {
  fail("result", (err as Error).message);
}
const size = encoder.encode(json).length;
if (size > limits.result_bytes) {
  fail(
    "result",
    "the result is " + size + " bytes of JSON, more than limits.result_bytes (" +
      limits.result_bytes + ")",
  );
}
if (!settled) {
  settled = true;
  sendLine('{"type":"result","value":' + json + "}");
  exit(0);
}
