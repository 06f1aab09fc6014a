/**
 * Example JavaScript/TypeScript tool: pretends to work on a task, reporting progress to the client
 * as it goes (AG-UI CUSTOM events named "progress"), then counts the task in the agent state.
 *
 * Runs in a sandboxed Worker with no permissions (see docs/tools.md). The type import is erased
 * before the module runs, so the Worker never needs to read agentd's own files.
 */
import type { JsToolContext } from "../../../src/tools/library.ts";

/** Arguments the model passes (the manifest's `parameters` describe them). */
interface Args {
  task?: string;
  steps?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Works through `steps` steps, emitting progress from 0 to 1, and records the task in the state. */
export async function run(args: Args, ctx: JsToolContext): Promise<unknown> {
  const task = args.task?.trim() || "something";
  const steps = Math.min(Math.max(Math.trunc(args.steps ?? 4), 1), 20);
  for (let i = 0; i <= steps; i++) {
    ctx.emit("progress", { task, value: i / steps });
    if (i < steps) await sleep(150);
  }
  const counter = typeof ctx.context?.counter === "number" ? ctx.context.counter : 0;
  return ctx.withState(
    { done: task, steps },
    {
      // `add` sets a member whether or not it exists yet.
      patch: [
        { op: "add", path: "/counter", value: counter + 1 },
        { op: "add", path: "/last_task", value: task },
      ],
    },
  );
}
