/** Checkpoints of a session: find (list). */
import { CheckpointListSchema, PageQuerySchema } from "../../api/schemas.ts";
import { route, type Routes, routes } from "../kit/mod.ts";
import { requireSession, SessionParams } from "./common.ts";

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
  return r;
}
