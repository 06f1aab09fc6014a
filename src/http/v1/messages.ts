/** Messages of a session: create, list, read, delete. */
import { Hono } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { MessageInputSchema } from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import { readBody } from "../kit/validation.ts";
import { bodyLimit } from "../kit/settings.ts";
import { pageQuery, requireSession } from "./common.ts";

/** Routes under `/v1/sessions/{session_id}/messages`. */
export function messageRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post("/sessions/:session_id/messages", async (c) => {
    const sessionId = c.req.param("session_id");
    const input = await readBody(c, MessageInputSchema, bodyLimit(c));
    const { store } = c.get("services");
    const tenant = c.get("tenant");
    await requireSession(c, sessionId);
    // The store refuses (409003) while a run is running: its checkpoints would disagree.
    const [message] = await store.appendMessages(tenant, sessionId, [input]);
    return c.json(message, 201, {
      location: `/v1/sessions/${sessionId}/messages/${message.message_id}`,
    });
  });

  r.get("/sessions/:session_id/messages", async (c) => {
    const sessionId = c.req.param("session_id");
    const { page } = pageQuery(c);
    await requireSession(c, sessionId);
    return c.json(
      await c.get("services").store.listMessages(c.get("tenant"), sessionId, page),
    );
  });

  r.get("/sessions/:session_id/messages/:message_id", async (c) => {
    const sessionId = c.req.param("session_id");
    const messageId = c.req.param("message_id");
    await requireSession(c, sessionId);
    const message = await c.get("services").store.getMessage(
      c.get("tenant"),
      sessionId,
      messageId,
    );
    if (!message) throw errors.messageNotFound(messageId);
    return c.json(message);
  });

  r.delete("/sessions/:session_id/messages/:message_id", async (c) => {
    const sessionId = c.req.param("session_id");
    const messageId = c.req.param("message_id");
    const tenant = c.get("tenant");
    const { store } = c.get("services");
    await requireSession(c, sessionId);
    if (!(await store.deleteMessage(tenant, sessionId, messageId))) {
      throw errors.messageNotFound(messageId);
    }
    return c.body(null, 204);
  });

  return r;
}
