/**
 * What a documented operation declares (method, path, parameters, body, responses, error codes),
 * from which the OpenAPI document is generated; the add-ons declare theirs with the same type.
 */
import type { z } from "zod";

/** HTTP methods of documented operations. */
export type Method = "get" | "post" | "put" | "delete";

/** The success response of an operation. */
export interface SuccessSpec {
  status: number;
  description: string;
  /** A JSON body. */
  json?: z.ZodType;
  /** An SSE stream; `events` is the schema of each frame's `data:` (any JSON when omitted). */
  sse?: { description: string; events?: z.ZodType };
  /** An HTML page. */
  html?: boolean;
  /** A text body of this media type. */
  text?: string;
  /** Response headers: name -> description. */
  headers?: Record<string, string>;
}

/** One documented operation. */
export interface OperationSpec {
  method: Method;
  /** OpenAPI path (`{param}` templates), absolute. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Served without an API key: always, or while `auth.public_docs` is true. */
  public?: "always" | "docs";
  /** Path parameters: name -> description. */
  pathParams?: Record<string, string>;
  /** Query parameters: each property of the object is one parameter. */
  query?: z.ZodObject;
  /** Descriptions of query parameters, by name. */
  queryDescriptions?: Record<string, string>;
  body?: { schema: z.ZodType; required: boolean; description?: string };
  success: SuccessSpec;
  /** Error codes this operation answers (docs/errors.md), besides the ones every route has. */
  errors: number[];
  /** The operation's own errors are A2A `google.rpc.Status` bodies (the A2A add-on). */
  a2aErrors?: boolean;
}

/** Error codes of every operation that reads a JSON body. */
export const BODY_ERRORS = [400001, 413001, 415001, 422000] as const;
