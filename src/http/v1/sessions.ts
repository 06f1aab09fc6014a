/** Sessions: create, list, read, delete. */
import { Hono } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { SessionCreateSchema } from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import { readJson, validate } from "../kit/validation.ts";
import { bodyLimit } from "../kit/settings.ts";
import { pageQuery } from "./common.ts";

/** Routes under `/v1/sessions`. */
export function sessionRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post("/sessions", async (c) => {
    // An empty body is allowed: it creates a session with a generated id.
    const hasBody = c.req.header("content-length") !== "0" && c.req.raw.body !== null;
    const raw = hasBody ? await readJson(c, bodyLimit(c)) : {};
    const input = validate(SessionCreateSchema, raw);
    const session = await c.get("services").store.createSession(c.get("tenant"), input);
    return c.json(session, 201, { location: `/v1/sessions/${session.session_id}` });
  });

  r.get("/sessions", async (c) => {
    const { page } = pageQuery(c);
    return c.json(await c.get("services").store.listSessions(c.get("tenant"), page));
  });

  r.get("/sessions/:session_id", async (c) => {
    const id = c.req.param("session_id");
    const session = await c.get("services").store.getSession(c.get("tenant"), id);
    if (!session) throw errors.sessionNotFound(id);
    return c.json(session);
  });

  r.delete("/sessions/:session_id", async (c) => {
    await c.get("services").store.deleteSession(c.get("tenant"), c.req.param("session_id"));
    return c.body(null, 204);
  });

  return r;
}
