/**
 * The AG-UI run endpoint, `POST <base>/run`: reads and maps the request, starts an attached native
 * run through the run service (same sessions, run records, cancellation and re-attach as `/v1`),
 * and streams the run's events through the AG-UI encoder.
 */
import { createRoute } from "@hono/zod-openapi";
import {
  BODY_ERRORS,
  jsonBody,
  keepaliveMs,
  route,
  type Routes,
  routes,
  sseResponse,
} from "../../http/kit/mod.ts";
import type { RunService } from "../../runs/service.ts";
import { agUiFrames } from "./encoder.ts";
import {
  NEW_THREAD,
  relabel,
  resolveRunInput,
  RunAgentInputSchema,
  type ThreadView,
  toRunRequest,
} from "./input.ts";
import { openInterrupts } from "./interrupts.ts";

/** Routes of the AG-UI add-on, mounted under its base path (`/ag-ui` by default). */
export function agUiRoutes(): Routes {
  const r = routes();

  route(r, RUN, async (c) => {
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    // Everything that can be refused is refused here, as a JSON error before any stream starts.
    const input = resolveRunInput(c.req.valid("json"));
    const thread = input.threadId ? await loadThread(runs, tenant, input.threadId) : NEW_THREAD;
    const mapped = toRunRequest(input, thread);
    let started;
    try {
      started = await runs.start(tenant, mapped.request, true);
    } catch (err) {
      throw relabel(err, mapped.field);
    }
    const frames = agUiFrames(started.events!, { clientMessageIds: mapped.clientMessageIds });
    return sseResponse(frames, {
      keepaliveMs: keepaliveMs(c),
      // As on the native attached stream: a client that goes away cancels its run.
      onClientGone: () => {
        runs.cancel(tenant, started.run_id).catch(() => {});
      },
      headers: { "x-run-id": started.run_id, "x-session-id": started.session_id },
    });
  });

  return r;
}

const RUN = createRoute({
  method: "post",
  path: "/run",
  operationId: "agUiRun",
  tags: ["AG-UI"],
  summary: "Run the agent (AG-UI RunAgentInput in, AG-UI events out)",
  description: "An attached native run: same sessions (`threadId`), records, cancellation " +
    "(closing the stream cancels the run) and re-attach as `/v1`. `forwardedProps.model` may " +
    "carry a `ModelConfig`. See docs/ag-ui.md.",
  middleware: jsonBody(),
  request: {
    body: { required: true, content: { "application/json": { schema: RunAgentInputSchema } } },
  },
  responses: {
    200: {
      description: "The run as AG-UI events.",
      headers: {
        "x-run-id": { description: "The run's id.", schema: { type: "string" } },
        "x-session-id": { description: "The session (thread) id.", schema: { type: "string" } },
      },
      content: {
        "text/event-stream": {
          schema: {
            type: "string",
            description: "AG-UI events: each frame has `event: <TYPE>` and `data:` the AG-UI " +
              "event as JSON (camelCase): RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, STATE_*, " +
              "MESSAGES_SNAPSHOT, STEP_*, CUSTOM, then RUN_FINISHED or RUN_ERROR.",
          },
        },
      },
    },
  },
  "x-errors": [...BODY_ERRORS, 404004, 409002, 409003, 503002],
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
