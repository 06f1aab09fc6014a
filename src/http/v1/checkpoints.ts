/** Checkpoints of a session: find (list) and read one. */
import {
  CheckpointListSchema,
  CheckpointSchema,
  NoQuerySchema,
  PageQuerySchema,
} from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import { route, type Routes, routes } from "../kit/mod.ts";
import { CheckpointParams, requireSession, SessionParams } from "./common.ts";

/** Routes under `/v1/sessions/{session_id}/checkpoints`. */
export function checkpointRoutes(): Routes {
  const r = routes();
  route(r, {
    method: "get",
    path: "/sessions/{session_id}/checkpoints",
    operationId: "listCheckpoints",
    tags: ["Checkpoints"],
    summary: "List a session's checkpoints",
    description: "Oldest first; a run may start from any of them (`checkpoint_id`).",
    request: { params: SessionParams, query: PageQuerySchema },
    responses: {
      200: {
        description: "A page of checkpoints.",
        content: { "application/json": { schema: CheckpointListSchema } },
      },
    },
    "x-errors": [404001, 422000],
  }, async (c) => {
    const sessionId = c.req.valid("param").session_id;
    await requireSession(c, sessionId);
    const { store } = c.get("services");
    return c.json(await store.listCheckpoints(c.get("tenant"), sessionId, c.req.valid("query")));
  });
  route(r, {
    method: "get",
    path: "/sessions/{session_id}/checkpoints/{checkpoint_id}",
    operationId: "getCheckpoint",
    tags: ["Checkpoints"],
    summary: "Read one checkpoint",
    description: "With its conversation as it was then (a run's `checkpoint_id` names its latest).",
    request: { params: CheckpointParams, query: NoQuerySchema },
    responses: {
      200: {
        description: "The checkpoint.",
        content: { "application/json": { schema: CheckpointSchema } },
      },
    },
    "x-errors": [404001, 404004, 422000],
  }, async (c) => {
    const { session_id, checkpoint_id } = c.req.valid("param");
    await requireSession(c, session_id);
    const { store } = c.get("services");
    const checkpoint = await store.getCheckpoint(c.get("tenant"), session_id, checkpoint_id);
    if (!checkpoint) throw errors.checkpointNotFound(checkpoint_id);
    return c.json(checkpoint);
  });
  return r;
}
