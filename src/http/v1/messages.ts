/** Messages of a session: create, list, read, delete. */
import { checkSessionRoom } from "../../engine/mod.ts";
import {
  MessageInputSchema,
  MessageListSchema,
  MessageSchema,
  NoQuerySchema,
  PageQuerySchema,
} from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import { BODY_ERRORS, jsonBody, route, type Routes, routes } from "../kit/mod.ts";
import { header, MessageParams, requireSession, SessionParams } from "./common.ts";

/** Routes under `/v1/sessions/{session_id}/messages`. */
export function messageRoutes(): Routes {
  const r = routes();

  route(r, {
    method: "post",
    path: "/sessions/{session_id}/messages",
    operationId: "createMessage",
    tags: ["Messages"],
    summary: "Add a message to a session",
    description: "Refused while a run of the session is running.",
    middleware: jsonBody(),
    request: {
      query: NoQuerySchema,
      params: SessionParams,
      body: { required: true, content: { "application/json": { schema: MessageInputSchema } } },
    },
    responses: {
      201: {
        description: "The stored message.",
        headers: { location: header("`/v1/sessions/{session_id}/messages/{message_id}`") },
        content: { "application/json": { schema: MessageSchema } },
      },
    },
    "x-errors": [...BODY_ERRORS, 404001, 409003, 409005, 413002, 413003],
  }, async (c) => {
    const sessionId = c.req.valid("param").session_id;
    await requireSession(c, sessionId);
    const { store, config } = c.get("services");
    const input = c.req.valid("json");
    // The message and session caps, as a run's input meets them (413003, 413002).
    const conversation = await store.allMessages(c.get("tenant"), sessionId);
    checkSessionRoom(conversation, [input], config.manifest.runtime);
    // The store refuses (409003) while a run is running: its checkpoints would disagree.
    const [message] = await store.appendMessages(c.get("tenant"), sessionId, [input]);
    return c.json(message, 201, {
      location: `/v1/sessions/${sessionId}/messages/${message.message_id}`,
    });
  });

  route(r, {
    method: "get",
    path: "/sessions/{session_id}/messages",
    operationId: "listMessages",
    tags: ["Messages"],
    summary: "List a session's messages",
    request: { params: SessionParams, query: PageQuerySchema },
    responses: {
      200: {
        description: "A page of messages.",
        content: { "application/json": { schema: MessageListSchema } },
      },
    },
    "x-errors": [404001, 422000],
  }, async (c) => {
    const sessionId = c.req.valid("param").session_id;
    await requireSession(c, sessionId);
    const { store } = c.get("services");
    return c.json(await store.listMessages(c.get("tenant"), sessionId, c.req.valid("query")));
  });

  route(r, {
    method: "get",
    path: "/sessions/{session_id}/messages/{message_id}",
    operationId: "getMessage",
    tags: ["Messages"],
    summary: "Read a message",
    request: { params: MessageParams, query: NoQuerySchema },
    responses: {
      200: {
        description: "The message.",
        content: { "application/json": { schema: MessageSchema } },
      },
    },
    "x-errors": [404001, 404003],
  }, async (c) => {
    const { session_id: sessionId, message_id: messageId } = c.req.valid("param");
    await requireSession(c, sessionId);
    const { store } = c.get("services");
    const message = await store.getMessage(c.get("tenant"), sessionId, messageId);
    if (!message) throw errors.messageNotFound(messageId);
    return c.json(message);
  });

  route(r, {
    method: "delete",
    path: "/sessions/{session_id}/messages/{message_id}",
    operationId: "deleteMessage",
    tags: ["Messages"],
    summary: "Delete a message",
    description: "Refused while a run of the session is running.",
    request: { params: MessageParams, query: NoQuerySchema },
    responses: { 204: { description: "Deleted." } },
    "x-errors": [404001, 404003, 409003],
  }, async (c) => {
    const { session_id: sessionId, message_id: messageId } = c.req.valid("param");
    await requireSession(c, sessionId);
    // The store refuses (409003) while a run is running, in the same transaction as the delete.
    if (!(await c.get("services").store.deleteMessage(c.get("tenant"), sessionId, messageId))) {
      throw errors.messageNotFound(messageId);
    }
    return c.body(null, 204);
  });

  return r;
}
