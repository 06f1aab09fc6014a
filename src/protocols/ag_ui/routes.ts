/**
 * The AG-UI endpoints: `POST <base>/run` reads and maps the request, starts an attached native run
 * through the run service (same sessions, run records, cancellation and re-attach as `/v1`), and
 * streams the run's events through the AG-UI encoder; `POST <base>/connect` gives a client (after
 * a reload) its thread back and re-joins the thread's run in progress, from its cursor.
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import type { Run } from "../../api/schemas.ts";
import { makeEvent, type RunEvent, type RunStreamItem } from "../../api/events.ts";
import type { OnDisconnect } from "../../config/schema/http_server.ts";
import { errors } from "../../errors.ts";
import {
  BODY_ERRORS,
  type Cursor,
  jsonBody,
  keepaliveMs,
  nonEmpty,
  relabelFields,
  requestCursor,
  route,
  type RouteContext,
  type Routes,
  routes,
  sseResponse,
  streamAfter,
} from "../../http/kit/mod.ts";
import type { RunService } from "../../runs/service.ts";
import { agUiFrames } from "./encoder.ts";
import { agUiEventSchema } from "./event_schemas.ts";
import { type AgUiRunInput, resolveRunInput } from "./input.ts";
import { openInterrupts } from "./interrupts.ts";
import { NEW_THREAD, type ThreadView, toRunRequest } from "./request.ts";
import { RunAgentInputSchema } from "./schemas.ts";
import { newId } from "../../ids.ts";

/** What the routes read of the manifest's `ag_ui {}` block. */
export interface AgUiSettings {
  /** What closing a run's stream does when `forwardedProps.on_disconnect` does not say. */
  on_disconnect: OnDisconnect;
}

/** Routes of the AG-UI add-on, mounted under its base path (`/ag-ui` by default). */
export function agUiRoutes(settings: AgUiSettings): Routes {
  const r = routes();

  route(r, RUN, async (c) => {
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    // Everything that can be refused is refused here, as a JSON error before any stream starts.
    const input = resolveRunInput(c.req.valid("json"));
    const thread = input.threadId ? await loadThread(runs, tenant, input.threadId) : NEW_THREAD;
    const mapped = toRunRequest(input, thread);
    // A resume that reuses the interrupted run's id (CopilotKit does) continues in a new run.
    const continued = await continuationId(runs, tenant, input);
    if (continued) mapped.request.run_id = continued;
    const onDisconnect = input.onDisconnect ?? settings.on_disconnect;
    let started;
    try {
      // Resolved on the run: a resumed attempt waits for the client as this stream would.
      started = await runs.start(tenant, { ...mapped.request, on_disconnect: onDisconnect }, true);
    } catch (err) {
      throw relabelFields(err, mapped.field);
    }
    if (started.steered) {
      // The messages joined the thread's running run (steer): its stream, from its first event
      // (AG-UI opens with RUN_STARTED), as a connect gives it. Dropping it leaves the run going.
      await (started.events as AsyncGenerator<unknown> | undefined)?.return(undefined);
      const stream = await runs.attach(tenant, started.run_id, { after: 0, fromFirst: true });
      const joined = agUiFrames(stream, {
        clientMessageIds: mapped.clientMessageIds,
        cursor: { seq: 0, part: 0 },
      });
      return sseResponse(joined, {
        keepaliveMs: keepaliveMs(c),
        headers: { "x-run-id": started.run_id, "x-session-id": started.session_id },
      });
    }
    const frames = agUiFrames(started.events!, {
      clientMessageIds: mapped.clientMessageIds,
      ...(continued ? { runId: input.runId! } : {}),
    });
    return sseResponse(frames, {
      keepaliveMs: keepaliveMs(c),
      // As on the native attached stream: a client that goes away cancels its run once the
      // re-attach grace passed, unless it asked the run to continue (it reconnects with
      // `/connect`).
      onClientGone: onDisconnect === "cancel"
        ? () => void runs.clientGone(tenant, started.run_id)
        : undefined,
      headers: { "x-run-id": started.run_id, "x-session-id": started.session_id },
    });
  });

  route(r, CONNECT, async (c) => {
    const input = resolveRunInput(c.req.valid("json"));
    if (!input.threadId) {
      throw errors.validation([{
        field: "threadId",
        errors: [{ code: "required", message: "connect needs the thread to connect to" }],
      }]);
    }
    const frames = await connectFrames(c, input.threadId, input.runId);
    // Dropping a connect stream, like a re-attach, leaves the run running.
    return sseResponse(frames, { keepaliveMs: keepaliveMs(c) });
  });

  return r;
}

/**
 * The native id of a run that continues an interrupted run whose id the client reused (what
 * CopilotKit's `useInterrupt` sends: the same `runId` with `resume` entries): `<runId>:2`, then
 * `:3` … for further continuations, or a generated id when that would be longer than an id may be.
 * Undefined when the id is new (the request runs under it) or names a run that cannot be
 * continued (not interrupted, or of another thread: the request gets the usual 409002).
 */
async function continuationId(
  runs: RunService,
  tenant: string,
  input: AgUiRunInput,
): Promise<string | undefined> {
  if (!input.runId || !input.threadId) return undefined;
  const reused = await runs.getRun(tenant, input.runId);
  if (reused?.status !== "interrupted" || reused.session_id !== input.threadId) return undefined;
  for (let k = 2;; k++) {
    const id = `${input.runId}:${k}`;
    if (id.length > 128) return newId();
    if (!(await runs.getRun(tenant, id))) return id;
  }
}

/**
 * The frames of a connect. The run it re-joins is the one the body's `runId` names when it is a
 * run of the thread, else the thread's running run; with a cursor (`Last-Event-ID`), also one
 * that ended within the retention window. That run's stream is replayed from its first event
 * (without a cursor) or continued after the cursor (with the thread as of the cursor first, see
 * `agUiFrames`), to `RUN_FINISHED`. Without such a run, the thread as it is: `RUN_STARTED`,
 * `MESSAGES_SNAPSHOT`, `STATE_SNAPSHOT`, and a `RUN_FINISHED` that names what the thread waits
 * for (the interrupts of its last run, still open), the cancelled outcome when its last run was
 * cancelled, or (in place of `RUN_FINISHED`) its `RUN_ERROR` when it failed.
 */
async function connectFrames(
  c: RouteContext<typeof CONNECT>,
  threadId: string,
  runId: string | null,
): Promise<AsyncIterable<string>> {
  const { runs } = c.get("services");
  const tenant = c.get("tenant");
  const cursor = requestCursor(c.req.header("last-event-id"), undefined);
  const named = runId ? await runs.getRun(tenant, runId) : null;
  const target = named?.session_id === threadId ? named : await runs.runningRun(tenant, threadId) ??
    (cursor ? (await runs.sessionState(tenant, threadId))?.run ?? null : null);
  if (target && (target.status === "running" || cursor)) {
    const from: Cursor = cursor ?? { seq: 0, part: 0 };
    const stream = await runs.attach(tenant, target.run_id, {
      after: streamAfter(from),
      fromFirst: true,
    });
    const frames = agUiFrames(stream, { cursor: from });
    // A run that ended and that the client has whole: the thread as it is, like an idle one.
    const rest = stream.live ? frames : await nonEmpty(frames);
    if (rest) return rest;
  }
  return agUiFrames(threadEvents(await threadNow(runs, tenant, threadId, runId)));
}

/** A thread as it is now, as the events of a run that only shows it. */
interface ThreadNow {
  threadId: string;
  runId: string;
  messages: RunEvent & { kind: "messages_snapshot" };
  context: Record<string, unknown>;
  /** The thread's last run when it waits for something, else null. */
  waiting: Run | null;
  /** The thread's last run when it was cancelled (its answer may be cut) or failed, else null. */
  ended: Run | null;
}

async function threadNow(
  runs: RunService,
  tenant: string,
  threadId: string,
  runId: string | null,
): Promise<ThreadNow> {
  const session = await runs.sessionState(tenant, threadId);
  const thread = session ? await loadThread(runs, tenant, threadId) : NEW_THREAD;
  const last = session?.run ?? null;
  // Only what still waits: calls answered or deleted through the messages API since are not.
  const open = new Set(thread.open.map((o) => o.id));
  const payload = last?.interrupt_payload as { pending?: { tool_call_id: string }[] } | null;
  const waiting = last?.status === "interrupted" && open.size > 0
    ? {
      ...last,
      interrupt_payload: payload?.pending
        ? { ...payload, pending: payload.pending.filter((p) => open.has(p.tool_call_id)) }
        : payload,
    }
    : null;
  return {
    threadId,
    // The last run's id, so a client that answers its interrupts resumes it by that id.
    runId: last?.run_id ?? runId ?? newId(),
    messages: makeEvent("messages_snapshot", { messages: session?.messages ?? [] }),
    context: session?.context ?? {},
    waiting,
    ended: last?.status === "cancelled" || last?.status === "failed" ? last : null,
  };
}

/** The sequence-less events that show a thread (see `connectFrames`). */
async function* threadEvents(now: ThreadNow): AsyncGenerator<RunStreamItem> {
  const { threadId, runId, waiting } = now;
  yield { seq: null, event: makeEvent("run_started", { session_id: threadId, run_id: runId }) };
  yield { seq: null, event: now.messages };
  yield { seq: null, event: makeEvent("state_snapshot", { context: now.context }) };
  yield {
    seq: null,
    event: makeEvent("run_finished", {
      session_id: threadId,
      run_id: runId,
      // As the last run's own stream ended: a cancelled run's cut answer does not look finished,
      // and a failed run's thread ends with its RUN_ERROR.
      status: waiting ? "interrupted" : now.ended?.status ?? "completed",
      interrupt_payload: waiting?.interrupt_payload ?? null,
      result: null,
      error: waiting ? null : now.ended?.error ?? null,
    }),
  };
}

/** An AG-UI event stream: `itemSchema` is the schema of each frame's `data:`. */
const AG_UI_STREAM = {
  "text/event-stream": {
    // Read when the document is built, so the schema is not built at start-up.
    get itemSchema() {
      return agUiEventSchema();
    },
  },
};

const RUN = createRoute({
  method: "post",
  path: "/run",
  operationId: "agUiRun",
  tags: ["AG-UI"],
  summary: "Run the agent (AG-UI RunAgentInput in, AG-UI events out)",
  description: "An attached native run: same sessions (`threadId`), records, cancellation " +
    "(closing the stream cancels the run unless `forwardedProps.on_disconnect` is " +
    "`continue`) and re-attach as `/v1`. `forwardedProps.model` may carry a `ModelConfig`. A " +
    "resume that reuses an interrupted run's `runId` continues it in a new native run. See " +
    "docs/ag-ui.md.",
  middleware: jsonBody(),
  request: {
    body: { required: true, content: { "application/json": { schema: RunAgentInputSchema } } },
  },
  responses: {
    200: {
      description: "The run as AG-UI events: each frame has `id:` (the run event's sequence " +
        "number, the stream cursor), `event: <TYPE>` and `data:` the AG-UI event as JSON " +
        "(`AgUiEvent`): RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, STATE_*, MESSAGES_SNAPSHOT, " +
        "STEP_*, CUSTOM, then RUN_FINISHED or RUN_ERROR.",
      headers: {
        "x-run-id": { description: "The run's id.", schema: { type: "string" } },
        "x-session-id": { description: "The session (thread) id.", schema: { type: "string" } },
      },
      content: AG_UI_STREAM,
    },
  },
  "x-errors": [...BODY_ERRORS, 404004, 409002, 409003, 413002, 413003, 503002],
});

const CONNECT = createRoute({
  method: "post",
  path: "/connect",
  operationId: "agUiConnect",
  tags: ["AG-UI"],
  summary: "Connect to a thread: its messages and state, and its run in progress",
  description: "A RunAgentInput with the `threadId` (`messages` may be empty; nothing is " +
    "stored). Streams `MESSAGES_SNAPSHOT` and `STATE_SNAPSHOT` of the thread and, when a run of " +
    "the thread is in progress (or ended within the retention window, with a cursor), its " +
    "events from the client's cursor (`Last-Event-ID`) to `RUN_FINISHED`. See docs/ag-ui.md.",
  middleware: jsonBody(),
  request: {
    body: { required: true, content: { "application/json": { schema: RunAgentInputSchema } } },
    headers: z.object({
      "last-event-id": z.string().optional().describe(
        "The id of the last frame the client received from the run's stream (the cursor).",
      ),
    }),
  },
  responses: {
    200: {
      description: "The thread, and its run in progress, as AG-UI events (as from `/run`); " +
        "the frames that replay the run carry its events' ids, the thread's snapshots none.",
      content: AG_UI_STREAM,
    },
  },
  "x-errors": [...BODY_ERRORS, 410001],
});

/**
 * What the mapping needs to know about a thread: the ids of the messages its session holds and
 * what its last stopped run waits for. A session that does not exist yet is an empty thread.
 */
export async function loadThread(
  runs: RunService,
  tenant: string,
  sessionId: string,
): Promise<ThreadView> {
  const session = await runs.sessionState(tenant, sessionId);
  if (!session) return NEW_THREAD;
  // The run that wrote the latest checkpoint is the one whose pending calls the engine resumes; a
  // call the messages API answered or deleted since no longer waits (the engine's rule).
  const waiting = new Set(session.pending.map((p) => p.tool_call_id));
  const open = (session.run ? openInterrupts(session.run) : []).filter((o) =>
    o.kind === "run" || waiting.has(o.call.tool_call_id)
  );
  return { messageIds: new Set(session.messages.map((m) => m.message_id)), open };
}
