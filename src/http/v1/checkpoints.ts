/** Checkpoints of a session: find (list). */
import { Hono } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { pageQuery, requireSession } from "./common.ts";

/** Routes under `/v1/sessions/{session_id}/checkpoints`. */
export function checkpointRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.get("/sessions/:session_id/checkpoints", async (c) => {
    const sessionId = c.req.param("session_id");
    const { page } = pageQuery(c);
    await requireSession(c, sessionId);
    return c.json(
      await c.get("services").store.listCheckpoints(c.get("tenant"), sessionId, page),
    );
  });
  return r;
}
