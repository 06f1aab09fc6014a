/** Sessions: create, list, read, delete. */
import {
  NoQuerySchema,
  PageQuerySchema,
  SessionCreateSchema,
  SessionListSchema,
  SessionReadSchema,
  SessionSchema,
} from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import { BODY_ERRORS, jsonBody, route, type Routes, routes } from "../kit/mod.ts";
import { header, SessionParams } from "./common.ts";

/** Routes under `/v1/sessions`. */
export function sessionRoutes(): Routes {
  const r = routes();

  route(r, {
    method: "post",
    path: "/sessions",
    operationId: "createSession",
    tags: ["Sessions"],
    summary: "Create a session",
    description: "An empty body creates a session with a generated id.",
    middleware: jsonBody({ optional: true }),
    request: {
      query: NoQuerySchema,
      body: { required: false, content: { "application/json": { schema: SessionCreateSchema } } },
    },
    responses: {
      201: {
        description: "The session.",
        headers: { location: header("`/v1/sessions/{session_id}`") },
        content: { "application/json": { schema: SessionSchema } },
      },
    },
    "x-errors": [...BODY_ERRORS, 409001],
  }, async (c) => {
    const session = await c.get("services").store.createSession(
      c.get("tenant"),
      c.req.valid("json"),
    );
    return c.json(session, 201, { location: `/v1/sessions/${session.session_id}` });
  });

  route(r, {
    method: "get",
    path: "/sessions",
    operationId: "listSessions",
    tags: ["Sessions"],
    summary: "List sessions",
    request: { query: PageQuerySchema },
    responses: {
      200: {
        description: "A page of sessions.",
        content: { "application/json": { schema: SessionListSchema } },
      },
    },
    "x-errors": [422000],
  }, async (c) => {
    const { store } = c.get("services");
    return c.json(await store.listSessions(c.get("tenant"), c.req.valid("query")));
  });

  route(r, {
    method: "get",
    path: "/sessions/{session_id}",
    operationId: "getSession",
    tags: ["Sessions"],
    summary: "Read a session",
    request: { params: SessionParams, query: NoQuerySchema },
    responses: {
      200: {
        description: "The session, with its runs' totals.",
        content: { "application/json": { schema: SessionReadSchema } },
      },
    },
    "x-errors": [404001],
  }, async (c) => {
    const id = c.req.valid("param").session_id;
    const { store } = c.get("services");
    const session = await store.getSession(c.get("tenant"), id);
    if (!session) throw errors.sessionNotFound(id);
    return c.json({ ...session, ...await store.sessionTotals(c.get("tenant"), id) });
  });

  route(r, {
    method: "delete",
    path: "/sessions/{session_id}",
    operationId: "deleteSession",
    tags: ["Sessions"],
    summary: "Delete a session",
    description: "Its messages, runs and checkpoints go with it.",
    request: { params: SessionParams, query: NoQuerySchema },
    responses: { 204: { description: "Deleted." } },
    "x-errors": [404001, 409003],
  }, async (c) => {
    await c.get("services").store.deleteSession(c.get("tenant"), c.req.valid("param").session_id);
    return c.body(null, 204);
  });

  return r;
}
