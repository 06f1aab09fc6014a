/**
 * The route registry: one entry per operation the app serves (method, path, summary, parameters,
 * body, responses and error codes), from which the OpenAPI document is generated. Bodies and
 * records are the zod schemas the routes validate with; nothing here restates a shape.
 *
 * A route added to the app without an entry here fails `tests/http/openapi_test.ts`, which walks
 * the live router and looks every route up in the generated document.
 */
import { z } from "zod";
import {
  CheckpointSchema,
  listEnvelope,
  MessageInputSchema,
  MessageSchema,
  PageQuerySchema,
  RunFilterQuerySchema,
  RunRequestSchema,
  RunSchema,
  RunStartedSchema,
  SessionCreateSchema,
  SessionSchema,
} from "../../api/schemas.ts";
import { RunEventSchema } from "../../engine/events.ts";
import { BODY_ERRORS, type OperationSpec } from "../kit/openapi.ts";

/** Body of `GET /healthz`. */
export const HealthSchema = z.object({ status: z.literal("ok") });
/** Body of `GET /readyz`. */
export const ReadySchema = z.object({
  status: z.literal("ready"),
  store: z.enum(["sqlite", "postgres"]).describe("The store that answered."),
});

const PAGE_DESCRIPTIONS: Record<string, string> = {
  per_page: "Largest page size, 1–1000.",
  page: "Opaque cursor: the `next_page` of the previous response.",
};

/** List envelopes, one instance each so each becomes one named component. */
export const SessionListSchema = listEnvelope(SessionSchema);
/** A page of messages. */
export const MessageListSchema = listEnvelope(MessageSchema);
/** A page of checkpoints. */
export const CheckpointListSchema = listEnvelope(CheckpointSchema);
/** A page of runs. */
export const RunListSchema = listEnvelope(RunSchema);

const SESSION = { session_id: "The session's id." };
const MESSAGE = { ...SESSION, message_id: "The message's id." };
const RUN = { run_id: "The run's id." };

const RUN_STREAM = {
  description: "The run's events as Server-Sent Events: each frame has `event: <kind>` and " +
    "`data: <the event as JSON>`; comment lines (`: keep-alive`) separate events while the run " +
    "is quiet. `run_finished` is the last event. A `: stream ended: <reason>` comment ends a " +
    "stream whose live delivery was lost (`subscriber_overflow`, `transport_lost`).",
  events: RunEventSchema,
};

/** The operations of the app itself: health, reference and the native `/v1` API. */
export function nativeOperations(): OperationSpec[] {
  return [
    {
      method: "get",
      path: "/healthz",
      operationId: "health",
      tag: "Health",
      summary: "Liveness",
      description: "200 while the process serves.",
      public: "always",
      success: { status: 200, description: "The process serves.", json: HealthSchema },
      errors: [],
    },
    {
      method: "get",
      path: "/readyz",
      operationId: "ready",
      tag: "Health",
      summary: "Readiness",
      description: "200 when the store answers, 503 otherwise.",
      public: "always",
      success: { status: 200, description: "The store answers.", json: ReadySchema },
      errors: [503001],
    },
    {
      method: "get",
      path: "/metrics",
      operationId: "metrics",
      tag: "Health",
      summary: "Prometheus metrics",
      description: "Runs, streams, model attempts, tools, pub/sub, store and HTTP metrics in " +
        "the Prometheus text format (0.0.4). Needs a key when API keys are on.",
      success: {
        status: 200,
        description: "The metrics.",
        text: "text/plain",
      },
      errors: [],
    },
    {
      method: "get",
      path: "/v1/openapi.json",
      operationId: "openapi",
      tag: "Reference",
      summary: "This OpenAPI 3.1 document",
      public: "docs",
      success: {
        status: 200,
        description: "The OpenAPI 3.1 document of this server.",
        json: z.record(z.string(), z.unknown()),
      },
      errors: [],
    },
    {
      method: "get",
      path: "/docs",
      operationId: "docs",
      tag: "Reference",
      summary: "API reference page",
      description: "This document rendered as one self-contained HTML page (works offline).",
      public: "docs",
      success: { status: 200, description: "An HTML page.", html: true },
      errors: [],
    },

    // Sessions
    {
      method: "post",
      path: "/v1/sessions",
      operationId: "createSession",
      tag: "Sessions",
      summary: "Create a session",
      description: "An empty body creates a session with a generated id.",
      body: { schema: SessionCreateSchema, required: false },
      success: {
        status: 201,
        description: "The session.",
        json: SessionSchema,
        headers: { location: "`/v1/sessions/{session_id}`" },
      },
      errors: [...BODY_ERRORS, 409001],
    },
    {
      method: "get",
      path: "/v1/sessions",
      operationId: "listSessions",
      tag: "Sessions",
      summary: "List sessions",
      query: PageQuerySchema,
      queryDescriptions: PAGE_DESCRIPTIONS,
      success: { status: 200, description: "A page of sessions.", json: SessionListSchema },
      errors: [422000],
    },
    {
      method: "get",
      path: "/v1/sessions/{session_id}",
      operationId: "getSession",
      tag: "Sessions",
      summary: "Read a session",
      pathParams: SESSION,
      success: { status: 200, description: "The session.", json: SessionSchema },
      errors: [404001],
    },
    {
      method: "delete",
      path: "/v1/sessions/{session_id}",
      operationId: "deleteSession",
      tag: "Sessions",
      summary: "Delete a session",
      description: "Its messages, runs and checkpoints go with it.",
      pathParams: SESSION,
      success: { status: 204, description: "Deleted." },
      errors: [404001, 409003],
    },

    // Messages
    {
      method: "post",
      path: "/v1/sessions/{session_id}/messages",
      operationId: "createMessage",
      tag: "Messages",
      summary: "Add a message to a session",
      description: "Refused while a run of the session is running.",
      pathParams: SESSION,
      body: { schema: MessageInputSchema, required: true },
      success: {
        status: 201,
        description: "The stored message.",
        json: MessageSchema,
        headers: { location: "`/v1/sessions/{session_id}/messages/{message_id}`" },
      },
      errors: [...BODY_ERRORS, 404001, 409003, 409005],
    },
    {
      method: "get",
      path: "/v1/sessions/{session_id}/messages",
      operationId: "listMessages",
      tag: "Messages",
      summary: "List a session's messages",
      pathParams: SESSION,
      query: PageQuerySchema,
      queryDescriptions: PAGE_DESCRIPTIONS,
      success: { status: 200, description: "A page of messages.", json: MessageListSchema },
      errors: [404001, 422000],
    },
    {
      method: "get",
      path: "/v1/sessions/{session_id}/messages/{message_id}",
      operationId: "getMessage",
      tag: "Messages",
      summary: "Read a message",
      pathParams: MESSAGE,
      success: { status: 200, description: "The message.", json: MessageSchema },
      errors: [404001, 404003],
    },
    {
      method: "delete",
      path: "/v1/sessions/{session_id}/messages/{message_id}",
      operationId: "deleteMessage",
      tag: "Messages",
      summary: "Delete a message",
      description: "Refused while a run of the session is running.",
      pathParams: MESSAGE,
      success: { status: 204, description: "Deleted." },
      errors: [404001, 404003, 409003],
    },

    // Checkpoints
    {
      method: "get",
      path: "/v1/sessions/{session_id}/checkpoints",
      operationId: "listCheckpoints",
      tag: "Checkpoints",
      summary: "List a session's checkpoints",
      description: "Oldest first; a run may start from any of them (`checkpoint_id`).",
      pathParams: SESSION,
      query: PageQuerySchema,
      queryDescriptions: PAGE_DESCRIPTIONS,
      success: { status: 200, description: "A page of checkpoints.", json: CheckpointListSchema },
      errors: [404001, 422000],
    },

    // Runs
    {
      method: "get",
      path: "/v1/sessions/{session_id}/runs",
      operationId: "listRuns",
      tag: "Runs",
      summary: "List a session's runs",
      pathParams: SESSION,
      query: PageQuerySchema.extend(RunFilterQuerySchema.shape),
      queryDescriptions: PAGE_DESCRIPTIONS,
      success: { status: 200, description: "A page of runs.", json: RunListSchema },
      errors: [404001, 422000],
    },
    {
      method: "get",
      path: "/v1/runs/{run_id}",
      operationId: "getRun",
      tag: "Runs",
      summary: "Read a run",
      description: "Another tenant's run is not found.",
      pathParams: RUN,
      success: { status: 200, description: "The run.", json: RunSchema },
      errors: [404002],
    },
    {
      method: "post",
      path: "/v1/runs",
      operationId: "startAttachedRun",
      tag: "Runs",
      summary: "Start a run and stream its events",
      description: "Closing the response before the run finishes cancels the run. A session " +
        "named by `session_id` that does not exist yet is created.",
      body: { schema: RunRequestSchema, required: true },
      success: {
        status: 200,
        description: "The run's event stream.",
        sse: RUN_STREAM,
        headers: { "x-run-id": "The run's id.", "x-session-id": "The session's id." },
      },
      errors: [...BODY_ERRORS, 404004, 409002, 409003, 503002],
    },
    {
      method: "post",
      path: "/v1/runs/start",
      operationId: "startDetachedRun",
      tag: "Runs",
      summary: "Start a run in the background",
      description: "The run continues after the response; dropping this request changes nothing.",
      body: { schema: RunRequestSchema, required: true },
      success: {
        status: 202,
        description: "The run started.",
        json: RunStartedSchema,
        headers: { location: "`/v1/runs/{run_id}`" },
      },
      errors: [...BODY_ERRORS, 404004, 409002, 409003, 503002],
    },
    {
      method: "put",
      path: "/v1/runs/{run_id}/cancel",
      operationId: "cancelRun",
      tag: "Runs",
      summary: "Cancel a run",
      description: "204 whether it cancelled a running run or the run had already ended.",
      pathParams: RUN,
      success: { status: 204, description: "Cancelled, or already terminal." },
      errors: [404002],
    },
    {
      method: "get",
      path: "/v1/runs/{run_id}/events",
      operationId: "attachRun",
      tag: "Runs",
      summary: "Re-attach to a running run's events",
      description: "Only events produced after attaching are delivered; dropping this stream " +
        "leaves the run running.",
      pathParams: RUN,
      success: { status: 200, description: "The run's live events.", sse: RUN_STREAM },
      errors: [404002, 409004],
    },
  ];
}
