/**
 * The bootstrap that runs inside a JavaScript tool's Worker, kept as a string so the Worker can
 * start from a `data:` URL: no file to read (the Worker may not read ours), nothing extra for
 * `deno compile` to include.
 *
 * Protocol (structured clone, one call per Worker):
 * - in: `{ module_url, function_name, revoke_read, args, context, tenant_id, session_id, run_id,
 *   tool_call_id }`
 * - out: any number of `{ type: "emit", name, json }`, then one `{ type: "result", json }` or
 *   `{ type: "error", stage: "load" | "export" | "call" | "result", error, permission }`.
 *
 * Values cross as JSON text made here, so the parent gets JSON by construction even from a tool
 * that posts messages of its own, and a lossy value (a Map, a Date, NaN) is refused here, where
 * the path to it is known, instead of being flattened silently.
 */
import { WITH_STATE_KEY, WITH_STATE_TAG } from "./library.ts";

/** The Worker's source (plain JavaScript; it must not import anything). */
export const JS_WORKER_SOURCE = `
"use strict";
// Captured before the tool module loads: the tool runs in this realm and could replace them.
const post = self.postMessage.bind(self);
const revoke = Deno.permissions.revoke.bind(Deno.permissions);
const stringify = JSON.stringify;
const NotCapable = Deno.errors.NotCapable;
const MARKER_KEY = ${JSON.stringify(WITH_STATE_KEY)};
const MARKER_TAG = ${JSON.stringify(WITH_STATE_TAG)};

function kindOf(value) {
  if (typeof value !== "object") return typeof value;
  const name = value.constructor && value.constructor.name;
  return name ? "a " + name : "an object without a plain prototype";
}

// The first thing in value that JSON cannot carry faithfully, as "path is what", or null.
function jsonProblem(value, path, stack) {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : path + " is " + value + ", which JSON cannot represent";
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

function toJson(value, what) {
  if (value === undefined) return "null"; // a tool that returns nothing returns null
  const root = what.split(" ").pop();
  const problem = jsonProblem(value, root, []);
  if (problem) {
    throw new TypeError(what + " is not JSON-serializable: " + problem +
      "; use plain objects, arrays, strings, finite numbers, booleans and null");
  }
  return stringify(value);
}

function describe(err) {
  if (err instanceof Error) return err.name + ": " + err.message;
  try { return String(err); } catch { return "a value that cannot be shown"; }
}

// Deno reports a missing grant as NotCapable, or as a TypeError while loading a module.
function isPermissionError(err) {
  return err instanceof NotCapable ||
    (err instanceof Error && /^Requires [a-z]+ access/.test(err.message));
}

let settled = false;
function fail(stage, err) {
  if (settled) return;
  settled = true;
  post({ type: "error", stage, error: describe(err), permission: isPermissionError(err) });
}

// A stray rejection or throw after the call started fails the call instead of the server.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  fail("call", event.reason);
});
self.addEventListener("error", (event) => {
  event.preventDefault();
  fail("call", event.error ?? event.message);
});

let started = false;
self.onmessage = async (event) => {
  if (started) return;
  started = true;
  const req = event.data;
  let fn;
  try {
    const mod = await import(req.module_url);
    const name = req.function_name;
    fn = mod[name];
    if (typeof fn !== "function") {
      const exported = Object.keys(mod).join(", ") || "nothing";
      fail(
        "export",
        (fn === undefined
          ? (name === "default"
            ? "the module has no default export"
            : "the module has no export named '" + name + "'")
          : "the export '" + name + "' is " + typeof fn + ", not a function") +
          " (it exports: " + exported + ")",
      );
      return;
    }
    // The module's directory was readable only so the module could load.
    if (req.revoke_read) await revoke({ name: "read", path: req.revoke_read });
  } catch (err) {
    fail("load", err);
    return;
  }
  const ctx = Object.freeze({
    context: req.context,
    tenant_id: req.tenant_id,
    session_id: req.session_id,
    run_id: req.run_id,
    tool_call_id: req.tool_call_id,
    emit(name, value) {
      if (typeof name !== "string" || name === "") throw new TypeError("emit: name must be a non-empty string");
      if (settled) return;
      post({ type: "emit", name, json: toJson(value, "emit: value") });
    },
    withState(result, update) {
      return { [MARKER_KEY]: MARKER_TAG, result, state: update };
    },
  });
  let value;
  try {
    value = await fn(req.args, ctx);
  } catch (err) {
    fail("call", err);
    return;
  }
  let json;
  try {
    json = toJson(value, "result");
  } catch (err) {
    fail("result", err.message);
    return;
  }
  if (settled) return;
  settled = true;
  post({ type: "result", json });
};
`;

/** The Worker's URL: the bootstrap as a `data:` URL (a constant, so nothing to revoke later). */
export const JS_WORKER_URL = `data:text/javascript;base64,${
  btoa(String.fromCharCode(...new TextEncoder().encode(JS_WORKER_SOURCE)))
}`;
