/**
 * The plug-in seam of the protocol add-ons: each add-on folder (src/protocols/<name>) exports a
 * function that builds one `AddOn` value from the manifest; `server.ts` hands the list to
 * `createApp`, which mounts the routes and documents the operations. Nothing in src/http knows an
 * add-on by name.
 */
import type { Hono } from "hono";
import type { z } from "zod";
import type { AppEnv } from "./env.ts";
import type { OperationSpec } from "./openapi.ts";

/** One protocol add-on, ready to mount. */
export interface AddOn {
  /** Its name (`ag_ui`, `a2a`): the `kind` of its SSE streams in the metrics. */
  readonly name: string;
  /** Where `routes` are mounted, without a trailing slash (`""` at the root). */
  readonly basePath: string;
  /** Its routes, relative to `basePath`. */
  readonly routes: Hono<AppEnv>;
  /** Routes mounted at the host root besides (the A2A root agent card), if any. */
  readonly rootRoutes?: Hono<AppEnv>;
  /**
   * Absolute paths served to GET without an API key (discovery documents such as the A2A agent
   * card, which a client reads before it has credentials).
   */
  readonly publicPaths: readonly string[];
  /** The OpenAPI tag of its operations. */
  readonly tag: { name: string; description: string };
  /** Its operations, with absolute paths. */
  readonly operations: readonly OperationSpec[];
  /** Schemas its operations use that become named OpenAPI components. */
  readonly schemas: readonly [string, z.ZodType][];
}
