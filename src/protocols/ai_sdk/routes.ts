/**
 * The AI SDK endpoints: `POST <base>/chat` (what `useChat`'s `DefaultChatTransport` posts) maps the
 * chat request onto an attached native run through the run service (same sessions, run records,
 * cancellation and re-attach as `/v1`) and streams the run as a UI message stream;
 * `GET <base>/chat/{id}/stream` (what `useChat({ resume: true })` asks) replays the chat's running
 * run from its retained events and goes on live, or answers 204 when none runs.
 */
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import type { Run } from "../../api/schemas.ts";
import type { OnDisconnect } from "../../config/schema/http_server.ts";
import {
  BODY_ERRORS,
  jsonBody,
  keepaliveMs,
  relabelFields,
  route,
  type Routes,
  routes,
  sseResponse,
} from "../../http/kit/mod.ts";
import type { RunService } from "../../runs/service.ts";
import { aiSdkFrames, type EarlierCall, UI_MESSAGE_STREAM_HEADERS } from "./encoder.ts";
import { type ChatView, toRunRequest } from "./request.ts";
import { aiSdkChunkSchema, ChatRequestSchema } from "./schemas.ts";
import { newId } from "../../ids.ts";

/** What the routes read of the manifest's `ai_sdk {}` block. */
export interface AiSdkSettings {
  /** What closing a chat response does when the request's `on_disconnect` does not say. */
  on_disconnect: OnDisconnect;
}

/** Routes of the AI SDK add-on, mounted under its base path (`/ai-sdk` by default). */
export function aiSdkRoutes(settings: AiSdkSettings): Routes {
  const r = routes();

  route(r, CHAT, async (c) => {
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    const body = c.req.valid("json");
    // Everything that can be refused is refused here, as a JSON error before any stream starts.
    const session = await runs.sessionState(tenant, body.id);
    const view: ChatView = {
      messageIds: new Set(session?.messages.map((m) => m.message_id) ?? []),
      pending: session?.pending ?? [],
    };
    const mapped = toRunRequest(body, view);
    // A continuation completes the interrupted run's assistant message: its run id says which.
    const waiting = mapped.continues ? session?.run ?? null : null;
    mapped.request.run_id = waiting ? await continuationId(runs, tenant, waiting.run_id) : newId();
    const onDisconnect = body.on_disconnect ?? settings.on_disconnect;
    let started;
    try {
      // Resolved on the run: a resumed attempt waits for the client as this stream would.
      started = await runs.start(tenant, { ...mapped.request, on_disconnect: onDisconnect }, true);
    } catch (err) {
      throw relabelFields(err, mapped.field);
    }
    const frames = aiSdkFrames(started.events!, {
      messageId: messageIdOf(started.run_id),
      denied: mapped.denied,
      held: waiting ? view.pending.map((p) => p.tool_call_id) : [],
    });
    return sseResponse(frames, {
      keepaliveMs: keepaliveMs(c),
      // Dropping the response leaves the run running unless asked otherwise: the resume GET
      // picks it up.
      onClientGone: onDisconnect === "cancel"
        ? () => void runs.clientGone(tenant, started.run_id)
        : undefined,
      headers: {
        ...UI_MESSAGE_STREAM_HEADERS,
        "x-run-id": started.run_id,
        "x-session-id": started.session_id,
      },
    });
  });

  route(r, RESUME, async (c) => {
    const { runs } = c.get("services");
    const tenant = c.get("tenant");
    const { id } = c.req.valid("param");
    const running = await runs.runningRun(tenant, id);
    if (!running) return c.body(null, 204);
    // From the run's first event: the client rebuilds the message from nothing.
    const stream = await runs.attach(tenant, running.run_id, { after: 0 });
    const frames = aiSdkFrames(stream, {
      messageId: messageIdOf(running.run_id),
      earlier: await earlierCalls(runs, tenant, running.run_id),
    });
    // Dropping a resumed stream, like a re-attach, leaves the run running.
    return sseResponse(frames, {
      keepaliveMs: keepaliveMs(c),
      headers: {
        ...UI_MESSAGE_STREAM_HEADERS,
        "x-run-id": running.run_id,
        "x-session-id": running.session_id,
      },
    });
  });

  return r;
}

/**
 * The id of the assistant UI message a run writes: the run's own id, or for a run that continues
 * an interrupted one (`<id>:2`, `<id>:3` …) the id of the run that began the message.
 */
export function messageIdOf(runId: string): string {
  const at = runId.indexOf(":");
  return at < 0 ? runId : runId.slice(0, at);
}

/**
 * The id of the run that continues the interrupted run `runId`: `<message id>:2`, `:3` … (the
 * first free one), or a generated id when that would be longer than an id may be.
 */
async function continuationId(runs: RunService, tenant: string, runId: string): Promise<string> {
  const base = messageIdOf(runId);
  for (let k = 2;; k++) {
    const id = `${base}:${k}`;
    if (id.length > 128) return newId();
    if (!(await runs.getRun(tenant, id))) return id;
  }
}

/** The run a continuation (`<id>:k`) continues: `<id>:(k-1)`, or `<id>` for `:2`. */
function previousRunId(runId: string): string | null {
  const m = /^(.*):(\d+)$/.exec(runId);
  if (!m) return null;
  const k = Number(m[2]);
  return k <= 2 ? m[1] : `${m[1]}:${k - 1}`;
}

/** The calls a continuation run answers, as the client knew them (for a replay). */
async function earlierCalls(runs: RunService, tenant: string, runId: string) {
  const previous = previousRunId(runId);
  const run: Run | null = previous ? await runs.getRun(tenant, previous) : null;
  const pending = run?.interrupt_payload?.pending;
  if (!Array.isArray(pending)) return [];
  return pending.flatMap((p): EarlierCall[] =>
    p !== null && typeof p === "object" && typeof p.tool_call_id === "string" &&
      typeof p.tool_name === "string"
      ? [{ toolCallId: p.tool_call_id, toolName: p.tool_name, input: p.arguments ?? {} }]
      : []
  );
}

/** A UI message stream: `itemSchema` is the schema of each frame's `data:`. */
const UI_MESSAGE_STREAM = {
  "text/event-stream": {
    // Read when the document is built, so the schema is not built at start-up.
    get itemSchema() {
      return aiSdkChunkSchema();
    },
  },
};

const STREAM_HEADERS = {
  "x-vercel-ai-ui-message-stream": {
    description: "`v1`: the AI SDK UI message stream protocol.",
    schema: { type: "string" as const },
  },
  "x-run-id": { description: "The run's id.", schema: { type: "string" as const } },
  "x-session-id": {
    description: "The session (the chat id).",
    schema: { type: "string" as const },
  },
};

const CHAT = createRoute({
  method: "post",
  path: "/chat",
  operationId: "aiSdkChat",
  tags: ["AI SDK"],
  summary: "Chat (useChat's request in, the UI message stream out)",
  description: "An attached native run in the session named by the chat `id`: new user " +
    "messages are its input, tool parts answering waiting calls its `resume_payload`. Closing " +
    "the stream leaves the run running (resume with `GET <base>/chat/{id}/stream`) unless " +
    "`on_disconnect` is `cancel`. See docs/ai-sdk.md.",
  middleware: jsonBody(),
  request: {
    body: { required: true, content: { "application/json": { schema: ChatRequestSchema } } },
  },
  responses: {
    200: {
      description: "The run as one assistant UI message: `start`, steps of text and tool " +
        "parts, `data-*` parts, then `finish` (after an `error` for a failed run) and " +
        "`data: [DONE]`. Each frame's `id:` is the run event's sequence number.",
      headers: STREAM_HEADERS,
      content: UI_MESSAGE_STREAM,
    },
  },
  "x-errors": [...BODY_ERRORS, 404004, 409002, 409003, 503002],
});

const RESUME = createRoute({
  method: "get",
  path: "/chat/{id}/stream",
  operationId: "aiSdkResumeChat",
  tags: ["AI SDK"],
  summary: "Resume the chat's answer in progress",
  description: "What `useChat({ resume: true })` asks after a reload: the chat's running run " +
    "from its first retained event, then live, to `finish`. See docs/ai-sdk.md.",
  request: {
    params: z.object({
      id: z.string().min(1).max(128).describe("The chat's id (the session)."),
    }),
  },
  responses: {
    200: {
      description: "The running run as from `POST <base>/chat`, replayed from its start.",
      headers: STREAM_HEADERS,
      content: UI_MESSAGE_STREAM,
    },
    204: { description: "No run of the chat is running: nothing to resume." },
  },
  "x-errors": [410001],
});
