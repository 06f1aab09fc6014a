/** What the `/v1` route modules share: path parameters, error lists and the session check. */
import { z } from "zod";
import { errors } from "../../errors.ts";
import type { Ctx } from "../kit/mod.ts";

/** `{session_id}`. */
export const SessionParams = z.object({ session_id: z.string().describe("The session's id.") });
/** `{session_id}` and `{message_id}`. */
export const MessageParams = SessionParams.extend({
  message_id: z.string().describe("The message's id."),
});
/** `{session_id}` and `{checkpoint_id}`. */
export const CheckpointParams = SessionParams.extend({
  checkpoint_id: z.string().describe("The checkpoint's id."),
});
/** `{run_id}`. */
export const RunParams = z.object({ run_id: z.string().describe("The run's id.") });

/** A documented response header (a string). */
export function header(description: string): { description: string; schema: { type: "string" } } {
  return { description, schema: { type: "string" } };
}

/** Throws 404001 unless the tenant has the session. */
export async function requireSession(c: Ctx, sessionId: string): Promise<void> {
  const { store } = c.get("services");
  if (!(await store.getSession(c.get("tenant"), sessionId))) {
    throw errors.sessionNotFound(sessionId);
  }
}
