/**
 * JavaScript/TypeScript tools: every call runs in a fresh Deno Worker holding exactly the
 * permissions the manifest grants (plus reading the module's own directory while it loads).
 *
 * One Worker per call, not one per tool: a call cannot see state a previous call left behind, a
 * timeout or cancellation is a plain `terminate()`, and the cost (11–15 ms per call on our
 * machines, see docs/tools.md) is small next to a model step.
 */
import { dirname, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { JS_WORKER_URL } from "./js_worker_source.ts";
import { errorMessage, interpretReturn, stripAnsi, toolError } from "./outcome.ts";
import type { ToolSpec } from "./spec.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "./types.ts";

/** A permission value of `Worker`'s `deno.permissions` option. */
type PermissionValue = boolean | string[];

/** The `deno.permissions` of a tool's Worker (every kind spelled out: an omitted one inherits). */
export interface WorkerPermissions {
  read: PermissionValue;
  write: PermissionValue;
  net: PermissionValue;
  env: PermissionValue;
  run: false;
  ffi: false;
  sys: false;
  import: false;
}

/** The Worker permissions of a tool, and the directory to revoke once its module has loaded. */
export interface WorkerSandbox {
  permissions: WorkerPermissions;
  /** The module's directory when the manifest does not grant reading it; revoked after import. */
  revoke_read: string | null;
}

/** Whether a granted path covers `dir` (is it, or one of its ancestors). */
function covers(granted: string, dir: string): boolean {
  const g = resolve(granted);
  return g === dir || dir.startsWith(g.endsWith(sep) ? g : g + sep);
}

/**
 * The sandbox of a tool's Worker. Importing a module needs read access to it and to every local
 * module it imports, so the Worker may read the module's directory; unless the manifest grants
 * that too, the bootstrap revokes it as soon as the module has loaded, so the tool function runs
 * with exactly the manifest's permissions. run, ffi, sys and import (remote code) are always off.
 */
export function workerSandbox(spec: ToolSpec): WorkerSandbox {
  const dir = dirname(resolve(spec.module));
  const p = spec.permissions;
  let read: PermissionValue = true;
  let revoke_read: string | null = null;
  if (p.read !== true) {
    const granted = p.read === false ? [] : p.read;
    read = granted.some((g) => covers(g, dir)) ? granted : [...granted, dir];
    if (!granted.some((g) => covers(g, dir))) revoke_read = dir;
  }
  return {
    permissions: {
      read,
      write: p.write,
      net: p.net,
      env: p.env,
      run: false,
      ffi: false,
      sys: false,
      import: false,
    },
    revoke_read,
  };
}

/** What the bootstrap posts back (checked: a tool can post messages of its own). */
type WorkerMessage =
  | { type: "emit"; name: string; json: string }
  | { type: "result"; json: string }
  | { type: "error"; stage: string; error: string; permission: boolean };

function isWorkerMessage(m: unknown): m is WorkerMessage {
  if (typeof m !== "object" || m === null) return false;
  const r = m as Record<string, unknown>;
  switch (r.type) {
    case "emit":
      return typeof r.name === "string" && typeof r.json === "string";
    case "result":
      return typeof r.json === "string";
    case "error":
      return typeof r.error === "string";
    default:
      return false;
  }
}

/** The error the model sees for a failure the bootstrap reported. */
function reportedError(m: Extract<WorkerMessage, { type: "error" }>): ToolOutcome {
  let message = stripAnsi(m.error);
  if (m.permission) {
    // Deno's advice ("run again with --allow-x") does not apply to a sandboxed tool.
    const what = message.replace(/^(NotCapable|TypeError): /, "")
      .replace(/,? run again with the --allow-[a-z]+ flag/, "");
    message = `permission denied: ${what} (the tool's manifest permissions do not grant it)`;
  }
  if (m.stage === "load") message = `the tool module could not be loaded: ${message}`;
  return toolError(message);
}

/** `WorkerOptions` with Deno's unstable `deno.permissions` (typed here: it is behind a flag). */
interface SandboxedWorkerOptions extends WorkerOptions {
  deno: { permissions: WorkerPermissions };
}

/** Creates the Tool for a JavaScript/TypeScript manifest tool block. */
export function createJavaScriptTool(spec: ToolSpec): Tool {
  const sandbox = workerSandbox(spec);
  const module_url = pathToFileURL(resolve(spec.module)).href;
  const function_name = spec.function ?? "default";
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    requires_approval: spec.requires_approval,
    async call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome> {
      try {
        return await callInWorker(spec, sandbox, module_url, function_name, args, ctx);
      } catch (err) {
        return toolError(`the tool could not run: ${errorMessage(err)}`);
      }
    },
  };
}

function callInWorker(
  spec: ToolSpec,
  sandbox: WorkerSandbox,
  module_url: string,
  function_name: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<ToolOutcome> {
  if (ctx.signal.aborted) return Promise.resolve(toolError("cancelled before the tool started"));
  const options: SandboxedWorkerOptions = {
    type: "module",
    name: `tool:${spec.name}`,
    deno: { permissions: sandbox.permissions },
  };
  const worker = new Worker(JS_WORKER_URL, options);
  return new Promise<ToolOutcome>((resolvePromise) => {
    let done = false;
    const finish = (outcome: ToolOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
      worker.terminate();
      resolvePromise(outcome);
    };
    const timer = setTimeout(
      () => finish(toolError(`timed out after ${spec.timeout} ms; the tool was stopped`)),
      spec.timeout,
    );
    const onAbort = () =>
      finish(toolError("cancelled: the run was cancelled and the tool stopped"));
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    worker.onmessage = (event: MessageEvent<unknown>) => {
      if (done) return;
      const m = event.data;
      if (!isWorkerMessage(m)) {
        finish(toolError("the tool's worker sent a message that is not part of the protocol"));
        return;
      }
      try {
        if (m.type === "emit") {
          ctx.emit(m.name, JSON.parse(m.json));
        } else if (m.type === "result") {
          finish(interpretReturn(JSON.parse(m.json), ctx.context));
        } else {
          finish(reportedError(m));
        }
      } catch (err) {
        // A forged message with text that is not JSON, or an emit sink that threw.
        if (m.type !== "emit") {
          finish(toolError(`the tool's result was unreadable: ${errorMessage(err)}`));
        }
      }
    };
    worker.onerror = (event: ErrorEvent) => {
      // Unhandled here it would surface as an uncaught error of the whole server.
      event.preventDefault();
      finish(toolError(`the tool's worker failed: ${stripAnsi(event.message)}`));
    };
    worker.onmessageerror = () => finish(toolError("the tool's worker sent an unreadable message"));

    try {
      worker.postMessage({
        module_url,
        function_name,
        revoke_read: sandbox.revoke_read,
        args,
        context: ctx.context,
        tenant_id: ctx.tenant_id,
        session_id: ctx.session_id,
        run_id: ctx.run_id,
        tool_call_id: ctx.tool_call_id,
      });
    } catch (err) {
      finish(toolError(`the arguments could not be passed to the tool: ${errorMessage(err)}`));
    }
  });
}
