/** Runs: list, read, start attached or detached, cancel, re-attach. */
import { Hono } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { RunFilterQuerySchema, RunRequestSchema } from "../../api/schemas.ts";
import { errors } from "../../errors.ts";
import type { EndNotice, RunEvent } from "../../engine/events.ts";
import { readBody, validate } from "../kit/validation.ts";
import { sseComment, sseFrame, sseResponse } from "../kit/sse.ts";
import { bodyLimit, keepaliveMs } from "../kit/settings.ts";
import { pageQuery, requireSession } from "./common.ts";

const RUN_FILTERS = Object.keys(RunFilterQuerySchema.shape);
const ARRAY_FILTERS = new Set(["ids", "session_ids", "statuses"]);

/** Native SSE frames of run events: `event: <kind>` and the event as JSON. */
export async function* nativeFrames(
  events: AsyncIterable<RunEvent | EndNotice>,
): AsyncGenerator<string> {
  for await (const event of events) {
    yield "notice" in event ? sseComment(`stream ended: ${event.notice}`) : sseFrame(
      event,
      event.kind,
    );
  }
}

/** Routes under `/v1/runs` and `/v1/sessions/{session_id}/runs`. */
export function runRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.get("/sessions/:session_id/runs", async (c) => {
    const sessionId = c.req.param("session_id");
    const { page, query } = pageQuery(c, RUN_FILTERS);
    const raw: Record<string, string | string[]> = {};
    for (const name of RUN_FILTERS) {
      const values = query.get(name);
      if (values) raw[name] = ARRAY_FILTERS.has(name) ? values : values[values.length - 1];
    }
    const q = validate(RunFilterQuerySchema, raw);
    const ms = (t: string | undefined) =>
      t === undefined ? undefined : Date.parse(t.replace(" ", "T"));
    const filter = {
      ids: q.ids,
      session_ids: q.session_ids,
      statuses: q.statuses,
      created_before: ms(q.created_before),
      created_after: ms(q.created_after),
      updated_before: ms(q.updated_before),
      updated_after: ms(q.updated_after),
    };
    await requireSession(c, sessionId);
    return c.json(
      await c.get("services").store.listRuns(c.get("tenant"), sessionId, filter, page),
    );
  });

  r.get("/runs/:run_id", async (c) => {
    const id = c.req.param("run_id");
    const run = await c.get("services").store.getRun(c.get("tenant"), id);
    if (!run) throw errors.runNotFound(id);
    return c.json(run);
  });

  r.post("/runs", async (c) => {
    const request = await readBody(c, RunRequestSchema, bodyLimit(c));
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    const started = await runs.start(tenant, request, true);
    return sseResponse(nativeFrames(started.events!), {
      keepaliveMs: keepaliveMs(c),
      // The spec: an attached run whose client goes away is cancelled, through the database.
      onClientGone: () => {
        runs.cancel(tenant, started.run_id).catch(() => {});
      },
      headers: { "x-run-id": started.run_id, "x-session-id": started.session_id },
    });
  });

  r.post("/runs/start", async (c) => {
    const request = await readBody(c, RunRequestSchema, bodyLimit(c));
    const started = await c.get("services").runs.start(c.get("tenant"), request, false);
    return c.json({ run_id: started.run_id, session_id: started.session_id }, 202, {
      location: `/v1/runs/${started.run_id}`,
    });
  });

  r.put("/runs/:run_id/cancel", async (c) => {
    await c.get("services").runs.cancel(c.get("tenant"), c.req.param("run_id"));
    return c.body(null, 204);
  });

  r.get("/runs/:run_id/events", async (c) => {
    const events = await c.get("services").runs.attach(c.get("tenant"), c.req.param("run_id"));
    return sseResponse(nativeFrames(events), { keepaliveMs: keepaliveMs(c) });
  });

  return r;
}
