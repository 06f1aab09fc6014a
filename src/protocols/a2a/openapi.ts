/**
 * How the A2A routes appear in the OpenAPI document, shared by the mounting (routes.ts) and the
 * HTTP+JSON binding (http_json.ts): tasks and stream frames by their schemas (responses.ts), the
 * card and the JSON-RPC envelope as JSON objects described in docs/a2a.md.
 */
import { z } from "zod";
import { StreamResponseSchema } from "./responses.ts";

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

/** An A2A JSON body of a schema (a task, a page of tasks). */
export function a2aJson(schema: z.ZodType) {
  return { "application/json": { schema } };
}

/** An A2A stream of `StreamResponse` frames: each frame one `data:` line holding one of them. */
export const A2A_STREAM = { "text/event-stream": { itemSchema: StreamResponseSchema } };

const JsonRpcId = z.union([z.string(), z.number(), z.null()]).describe("The request's id.");

/**
 * A frame of a JSON-RPC stream: a JSON-RPC response carrying one `StreamResponse`, or the error
 * response that ends the stream.
 */
const JsonRpcStreamResponseSchema = z.union([
  z.object({
    jsonrpc: z.literal("2.0").describe("Always `2.0`."),
    id: JsonRpcId,
    result: StreamResponseSchema.describe("The update."),
  }),
  z.object({
    jsonrpc: z.literal("2.0").describe("Always `2.0`."),
    id: JsonRpcId,
    error: z.object({
      code: z.number().int().describe("The A2A JSON-RPC error code (docs/a2a.md)."),
      message: z.string().describe("What went wrong."),
      data: z.unknown().describe("The `google.rpc.ErrorInfo` details."),
    }).describe("Why the stream ended (its last frame)."),
  }),
]).meta({
  id: "A2aJsonRpcStreamResponse",
  description: "A frame of a JSON-RPC stream (`SendStreamingMessage`, `SubscribeToTask`).",
});

/** A JSON-RPC stream: each frame one JSON-RPC response holding a `StreamResponse`. */
export const JSON_RPC_STREAM = {
  "text/event-stream": { itemSchema: JsonRpcStreamResponseSchema },
};

/** The A2A error answer of every operation: a `google.rpc.Status` body. */
export const A2A_ERROR = {
  description: "An A2A error: a `google.rpc.Status` body " +
    '`{"error": {"code", "status", "message", "details"}}` whose `details` hold a ' +
    "`google.rpc.ErrorInfo` (`reason`, such as `TASK_NOT_FOUND`); see docs/a2a.md.",
  content: { "application/json": { schema: { type: "object" as const } } },
};
