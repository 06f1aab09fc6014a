/**
 * The A2A add-on as the app mounts it: its routes under the configured base path, the agent card
 * also at the host root (where A2A clients look first), the card paths open without an API key,
 * and the operations the API reference lists for it.
 */
import { z } from "zod";
import type { AddOn, OperationSpec } from "../../http/kit/mod.ts";
import { JSON_RPC_METHODS } from "./jsonrpc.ts";
import { a2aRoutes, a2aWellKnownRoutes } from "./routes.ts";
import { CancelTaskRequestSchema, SendMessageRequestSchema } from "./schemas.ts";

const CARD = "/.well-known/agent-card.json";

/** The add-on for a manifest's `protocol { a2a { path = ... } }` block. */
export function a2aAddOn(settings: { path: string }): AddOn {
  const basePath = settings.path.replace(/\/+$/, "");
  // The card changes only with the manifest, i.e. when the server starts (its Last-Modified).
  const cardModified = new Date();
  return {
    name: "a2a",
    basePath,
    routes: a2aRoutes(cardModified),
    // The root card, for clients that discover from the host; the base path card stays canonical.
    ...(basePath === "" ? {} : { rootRoutes: a2aWellKnownRoutes(cardModified) }),
    publicPaths: [...new Set([CARD, `${basePath}${CARD}`])],
    tag: {
      name: "A2A",
      description: "The A2A add-on (`protocol { a2a {} }`, A2A v1.0, JSON-RPC and HTTP+JSON " +
        "bindings): tasks for other agents.",
    },
    operations: a2aOperations(basePath),
    schemas: [
      ["A2aSendMessageRequest", SendMessageRequestSchema],
      ["A2aCancelTaskRequest", CancelTaskRequestSchema],
    ],
  };
}

const A2A_OBJECT = z.record(z.string(), z.unknown());
const A2A_STREAM = {
  description: "A2A stream responses: each frame is one `data:` line holding exactly one of " +
    "`task`, `statusUpdate`, `artifactUpdate` (or `message`).",
};
const TASK = { id: "The task id (a native run id)." };

/**
 * A2A operations (v1.0 HTTP+JSON binding). Each but the agent card is also served under a
 * `/{tenant}` prefix, documented as its own path.
 */
function a2aOperations(at: string): OperationSpec[] {
  const ops: OperationSpec[] = [
    {
      method: "post",
      path: "/message:send",
      operationId: "a2aSendMessage",
      tag: "A2A",
      summary: "Send a message (answers the task)",
      body: { schema: SendMessageRequestSchema, required: true },
      success: { status: 200, description: '`{"task": Task}`.', json: A2A_OBJECT },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "post",
      path: "/message:stream",
      operationId: "a2aStreamMessage",
      tag: "A2A",
      summary: "Send a message, stream the task's updates",
      body: { schema: SendMessageRequestSchema, required: true },
      success: { status: 200, description: "The task's updates.", sse: A2A_STREAM },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "get",
      path: "/tasks",
      operationId: "a2aListTasks",
      tag: "A2A",
      summary: "List tasks (not supported: always an UnsupportedOperationError)",
      success: { status: 200, description: "Never: listing is not supported.", json: A2A_OBJECT },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "get",
      path: "/tasks/{id}",
      operationId: "a2aGetTask",
      tag: "A2A",
      summary: "Read a task",
      pathParams: TASK,
      query: z.object({ historyLength: z.number().int().min(0).optional() }),
      queryDescriptions: { historyLength: "Most history messages to include." },
      success: { status: 200, description: "The task.", json: A2A_OBJECT },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "post",
      path: "/tasks/{id}:cancel",
      operationId: "a2aCancelTask",
      tag: "A2A",
      summary: "Cancel a task",
      pathParams: TASK,
      body: { schema: CancelTaskRequestSchema, required: false },
      success: { status: 200, description: "The task after cancelling.", json: A2A_OBJECT },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "post",
      path: "/tasks/{id}:subscribe",
      operationId: "a2aSubscribeTask",
      tag: "A2A",
      summary: "Stream a working task's updates",
      pathParams: TASK,
      body: { schema: CancelTaskRequestSchema, required: false },
      success: { status: 200, description: "The task's updates.", sse: A2A_STREAM },
      errors: [],
      a2aErrors: true,
    },
    {
      method: "get",
      path: "/extendedAgentCard",
      operationId: "a2aExtendedAgentCard",
      tag: "A2A",
      summary: "Extended agent card (not supported: always an UnsupportedOperationError)",
      success: { status: 200, description: "Never: there is no extended card.", json: A2A_OBJECT },
      errors: [],
      a2aErrors: true,
    },
  ];
  const jsonRpc: OperationSpec = {
    method: "post",
    path: at === "" ? "/" : at,
    operationId: "a2aJsonRpc",
    tag: "A2A",
    summary: "A2A JSON-RPC 2.0 binding (every A2A method)",
    description: `One JSON-RPC 2.0 request object; methods: ${JSON_RPC_METHODS.join(", ")}. ` +
      "`SendStreamingMessage` and `SubscribeToTask` answer SSE whose frames are JSON-RPC " +
      "responses. Errors are JSON-RPC error objects with the A2A codes (docs/a2a.md).",
    body: { schema: A2A_OBJECT, required: true },
    success: {
      status: 200,
      description: "A JSON-RPC response (or, for the streaming methods, an SSE stream of them).",
      json: A2A_OBJECT,
      headers: { "A2A-Extensions": "The extensions the request activated (send methods)." },
    },
    errors: [],
    a2aErrors: true,
  };
  const card: OperationSpec = {
    method: "get",
    path: `${at}/.well-known/agent-card.json`,
    operationId: "a2aAgentCard",
    tag: "A2A",
    summary: "The Agent Card (A2A discovery)",
    public: "always",
    success: {
      status: 200,
      description: "The Agent Card (304 with no body for a matching If-None-Match).",
      json: A2A_OBJECT,
      headers: {
        "Cache-Control": "`public, max-age=300`.",
        ETag: "Strong entity tag of the document.",
        "Last-Modified": "When the server started (the card changes only with the manifest).",
      },
    },
    errors: [],
  };
  // The same card at the host root (mounted when the base path is not the root).
  const rootCard: OperationSpec[] = at.replace(/\/+$/, "") === "" ? [] : [{
    ...card,
    path: "/.well-known/agent-card.json",
    operationId: "a2aAgentCardAtRoot",
    summary: "The Agent Card at the host root (same document as under the A2A base path)",
  }];
  return [
    card,
    ...rootCard,
    jsonRpc,
    ...ops.map((op) => ({ ...op, path: at + op.path })),
    ...ops.map((op) => ({
      ...op,
      path: `${at}/{tenant}${op.path}`,
      operationId: `${op.operationId}ForTenant`,
      summary: `${op.summary}, for a tenant`,
      pathParams: { tenant: "The tenant (instead of `X-Tenant-ID`).", ...op.pathParams },
    })),
  ];
}
