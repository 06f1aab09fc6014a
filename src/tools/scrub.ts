/**
 * Tools whose results, state updates and emits carry no configured secret: a tool that was
 * granted a credential (an `env` permission) and repeats it in an error or a result would
 * otherwise hand it to the model, the clients and the stored conversation.
 */
import type { Scrub } from "../secrets.ts";
import type { Tool } from "./types.ts";
import { wrapTool } from "./wrap.ts";

/** Wraps every tool so that what it hands back passes through `scrub`. */
export function scrubTools(tools: Map<string, Tool>, scrub: Scrub): Map<string, Tool> {
  const out = new Map<string, Tool>();
  for (const [name, tool] of tools) {
    out.set(
      name,
      wrapTool(tool, async (args, ctx) =>
        scrub(
          await tool.call(args, {
            ...ctx,
            emit: (event, value) => ctx.emit(scrub(event), scrub(value)),
          }),
        )),
    );
  }
  return out;
}
