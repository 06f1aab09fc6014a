/** Runs: list, read, start attached or detached, cancel, re-attach. */
import {
  NoQuerySchema,
  RunListQuerySchema,
  RunListSchema,
  RunRequestSchema,
  RunSchema,
  RunStartedSchema,
} from "../../api/schemas.ts";
import { RunStepListSchema } from "../../api/run_steps.ts";
import { errors } from "../../errors.ts";
import { runEventSchema } from "../../api/events.ts";
import {
  BODY_ERRORS,
  jsonBody,
  keepaliveMs,
  nonEmpty,
  requestCursor,
  route,
  type Routes,
  routes,
  sseResponse,
  streamAfter,
} from "../kit/mod.ts";
import { z } from "zod";
import { header, requireSession, RunParams, SessionParams } from "./common.ts";
import { nativeFrames } from "./encoder.ts";

/** Milliseconds a browser's `EventSource` waits before it reconnects (and resumes by cursor). */
const RETRY_MS = 1_000;

/** The native run event stream: `itemSchema` is the schema of each frame's `data:`. */
const RUN_STREAM = {
  "text/event-stream": {
    // Read when the document is built, so the schema is not built at start-up.
    get itemSchema() {
      return runEventSchema();
    },
  },
};

/** How a run's event stream is framed (the description of each response that streams one). */
const RUN_STREAM_FRAMES = "Server-Sent Events, one run event a frame: `id: <sequence number>` " +
  "(the cursor to resume from), `event: <kind>` and `data: <the event as JSON>` (a `RunEvent`); " +
  "comment lines (`: keep-alive`) separate events while the run is quiet. `run_finished` is the " +
  "last event. A `: stream ended: <reason>` comment ends a stream whose live delivery was lost " +
  "(`subscriber_overflow`, `transport_lost`, `slow_consumer`).";

const RUN_BODY = {
  required: true,
  content: { "application/json": { schema: RunRequestSchema } },
};

/** Errors of starting a run (besides the body's). */
const START_ERRORS = [
  ...BODY_ERRORS,
  404004,
  409002,
  409003,
  413002,
  413003,
  429001,
  503002,
  503004,
];

/** Routes under `/v1/runs` and `/v1/sessions/{session_id}/runs`. */
export function runRoutes(): Routes {
  const r = routes();

  route(r, {
    method: "get",
    path: "/sessions/{session_id}/runs",
    operationId: "listRuns",
    tags: ["Runs"],
    summary: "List a session's runs",
    request: { params: SessionParams, query: RunListQuerySchema },
    responses: {
      200: {
        description: "A page of runs.",
        content: { "application/json": { schema: RunListSchema } },
      },
    },
    "x-errors": [404001, 422000],
  }, async (c) => {
    const sessionId = c.req.valid("param").session_id;
    const { per_page, page, ...q } = c.req.valid("query");
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
    const { store } = c.get("services");
    return c.json(await store.listRuns(c.get("tenant"), sessionId, filter, { per_page, page }));
  });

  route(r, {
    method: "get",
    path: "/runs/{run_id}",
    operationId: "getRun",
    tags: ["Runs"],
    summary: "Read a run",
    description: "Another tenant's run is not found.",
    request: { params: RunParams, query: NoQuerySchema },
    responses: {
      200: { description: "The run.", content: { "application/json": { schema: RunSchema } } },
    },
    "x-errors": [404002],
  }, async (c) => {
    const id = c.req.valid("param").run_id;
    const run = await c.get("services").store.getRun(c.get("tenant"), id);
    if (!run) throw errors.runNotFound(id);
    return c.json(run);
  });

  route(r, {
    method: "get",
    path: "/runs/{run_id}/steps",
    operationId: "listRunSteps",
    tags: ["Runs"],
    summary: "Read what a run did step by step",
    description: "Each step's start and duration; a model step's time to first token and, with " +
      "`runtime.record_model_requests` (on under `serve --watch`), the request as the provider " +
      "received it, secrets masked and the body cut at 64 KiB; a tool step's server tool calls " +
      "with arguments, results and durations. Tokens and finish reasons are the run's " +
      "`model_steps`. Another tenant's run is not found.",
    request: { params: RunParams, query: NoQuerySchema },
    responses: {
      200: {
        description: "The run's steps (so far, while it runs).",
        content: { "application/json": { schema: RunStepListSchema } },
      },
    },
    "x-errors": [404002],
  }, async (c) => {
    const id = c.req.valid("param").run_id;
    const steps = await c.get("services").store.listRunSteps(c.get("tenant"), id);
    if (!steps) throw errors.runNotFound(id);
    return c.json({ data: steps });
  });

  route(r, {
    method: "post",
    path: "/runs",
    operationId: "startAttachedRun",
    tags: ["Runs"],
    summary: "Start a run and stream its events",
    description: "Closing the response before the run finishes cancels the run. A session " +
      "named by `session_id` that does not exist yet is created.",
    middleware: jsonBody(),
    request: { body: RUN_BODY, query: NoQuerySchema },
    responses: {
      200: {
        description: `The run's event stream. ${RUN_STREAM_FRAMES}`,
        headers: {
          "x-run-id": header("The run's id."),
          "x-session-id": header("The session's id."),
          "x-steered": header(
            "`true` when the request's messages joined the running run `X-Run-ID` " +
              '(`multitask_strategy: "steer"`): the stream is that run\'s from their ' +
              "`messages_added` on.",
          ),
        },
        content: RUN_STREAM,
      },
    },
    "x-errors": START_ERRORS,
  }, async (c) => {
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    const request = c.req.valid("json");
    const onDisconnect = request.on_disconnect ??
      c.get("services").config.manifest.http_server?.on_disconnect ?? "cancel";
    // Resolved on the run: a resumed attempt waits for the client as this stream would.
    const started = await runs.start(tenant, { ...request, on_disconnect: onDisconnect }, true);
    return sseResponse(nativeFrames(started.events!), {
      keepaliveMs: keepaliveMs(c),
      retryMs: RETRY_MS,
      // The spec: an attached run whose client goes away is cancelled, through the database,
      // once `runtime.attached.reattach_grace` passed without a client re-attaching; unless the
      // client asked it to continue (it resumes by cursor). A steering request's stream is
      // another request's run: dropping it changes nothing.
      onClientGone: onDisconnect === "cancel" && !started.steered
        ? () => void runs.clientGone(tenant, started.run_id)
        : undefined,
      headers: {
        "x-run-id": started.run_id,
        "x-session-id": started.session_id,
        ...(started.steered ? { "x-steered": "true" } : {}),
      },
    });
  });

  route(r, {
    method: "post",
    path: "/runs/start",
    operationId: "startDetachedRun",
    tags: ["Runs"],
    summary: "Start a run in the background",
    description: "The run continues after the response; dropping this request changes nothing.",
    middleware: jsonBody(),
    request: { body: RUN_BODY, query: NoQuerySchema },
    responses: {
      202: {
        description: "The run started.",
        headers: { location: header("`/v1/runs/{run_id}`") },
        content: { "application/json": { schema: RunStartedSchema } },
      },
    },
    "x-errors": START_ERRORS,
  }, async (c) => {
    const started = await c.get("services").runs.start(
      c.get("tenant"),
      c.req.valid("json"),
      false,
    );
    const body = {
      run_id: started.run_id,
      session_id: started.session_id,
      ...(started.steered ? { steered: true } : {}),
      ...(started.queued ? { status: "queued" as const } : {}),
    };
    return c.json(body, 202, {
      location: `/v1/runs/${started.run_id}`,
    });
  });

  route(r, {
    method: "put",
    path: "/runs/{run_id}/cancel",
    operationId: "cancelRun",
    tags: ["Runs"],
    summary: "Cancel a run",
    description: "204 whether it cancelled a running run or the run had already ended.",
    request: { params: RunParams, query: NoQuerySchema },
    responses: { 204: { description: "Cancelled, or already terminal." } },
    "x-errors": [404002],
  }, async (c) => {
    await c.get("services").runs.cancel(c.get("tenant"), c.req.valid("param").run_id);
    return c.body(null, 204);
  });

  route(r, {
    method: "get",
    path: "/runs/{run_id}/events",
    operationId: "attachRun",
    tags: ["Runs"],
    summary: "Re-attach to a run's events, or resume them from a cursor",
    description: "Without a cursor, only events produced after attaching are delivered, of a " +
      "running run (409004 otherwise). With `Last-Event-ID` (what a browser's `EventSource` " +
      "sends when it reconnects) or `?after=`, every retained event after that frame id, then " +
      "the live ones; a run that ended within the retention window gives its remaining events " +
      "up to `run_finished` (204 when there are none). Dropping this stream leaves the run " +
      "running.",
    request: {
      params: RunParams,
      query: z.object({
        after: z.string().optional().describe(
          "A frame id (`N` or `N.k`) to resume after; `Last-Event-ID` wins when both are given.",
        ),
      }).strict(),
      headers: z.object({
        "last-event-id": z.string().optional().describe(
          "The id of the last frame the client received (the stream cursor).",
        ),
      }),
    },
    responses: {
      200: { description: `The run's events. ${RUN_STREAM_FRAMES}`, content: RUN_STREAM },
      204: { description: "Resumed after the run's last event: nothing more to send." },
    },
    "x-errors": [404002, 409004, 410001, 422000],
  }, async (c) => {
    const { runs } = c.get("services");
    const cursor = requestCursor(c.req.header("last-event-id"), c.req.valid("query").after);
    const stream = await runs.attach(
      c.get("tenant"),
      c.req.valid("param").run_id,
      cursor ? { after: streamAfter(cursor) } : {},
    );
    let frames = nativeFrames(stream, { cursor });
    if (!stream.live) {
      // A replay that has nothing after the cursor: 204 stops a reconnecting EventSource.
      const rest = await nonEmpty(frames);
      if (!rest) return c.body(null, 204);
      frames = rest;
    }
    return sseResponse(frames, { keepaliveMs: keepaliveMs(c), retryMs: RETRY_MS });
  });

  return r;
}
