/**
 * How the A2A routes appear in the OpenAPI document, shared by the mounting (routes.ts) and the
 * HTTP+JSON binding (http_json.ts): the A2A bodies are described in docs/a2a.md, not as schemas
 * here, so each route documents its content with these shapes.
 */

/** A documented response header (a string). */
export function header(description: string) {
  return { description, schema: { type: "string" as const } };
}

/** Any JSON object (the A2A bodies are described in docs/a2a.md, not here). */
export const JSON_OBJECT = {
  type: "object" as const,
  propertyNames: { type: "string" as const },
  additionalProperties: {},
};

/** An A2A JSON body (a Task, a Message or the card; see docs/a2a.md). */
export const A2A_BODY = { "application/json": { schema: JSON_OBJECT } };

/** An A2A stream of `StreamResponse` frames. */
export const A2A_STREAM = {
  "text/event-stream": {
    schema: {
      type: "string" as const,
      description: "A2A stream responses: each frame is one `data:` line holding exactly one of " +
        "`task`, `statusUpdate`, `artifactUpdate` (or `message`).",
    },
  },
};

/** The A2A error answer of every operation: a `google.rpc.Status` body. */
export const A2A_ERROR = {
  description: "An A2A error: a `google.rpc.Status` body " +
    '`{"error": {"code", "status", "message", "details"}}` whose `details` hold a ' +
    "`google.rpc.ErrorInfo` (`reason`, such as `TASK_NOT_FOUND`); see docs/a2a.md.",
  content: { "application/json": { schema: { type: "object" as const } } },
};
