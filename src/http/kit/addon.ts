/**
 * The plug-in seam of the protocol add-ons: each add-on folder (src/protocols/<name>) exports a
 * function that builds one `AddOn` value from its manifest block; `server.ts` hands the list to
 * `createApp`, which mounts the routes; the API reference documents them from their declarations.
 * Nothing in src/http knows an add-on by name.
 */
import type { Ctx } from "./env.ts";
import type { Routes } from "./routes.ts";

/** One protocol add-on, ready to mount. */
export interface AddOn {
  /** Its name (`ag_ui`, `a2a`): the `kind` of its SSE streams in the metrics. */
  readonly name: string;
  /** Where `routes` are mounted, without a trailing slash (`""` at the root). */
  readonly basePath: string;
  /** Its declared routes, relative to `basePath`. */
  readonly routes: Routes;
  /** Declared routes mounted at the host root besides (the A2A root agent card), if any. */
  readonly rootRoutes?: Routes;
  /**
   * Absolute paths served to GET without an API key (discovery documents such as the A2A agent
   * card, which a client reads before it has credentials).
   */
  readonly publicPaths: readonly string[];
  /** The OpenAPI tag its operations carry, with the tag's description. */
  readonly tag: { name: string; description: string };
  /**
   * Answers an error the app raised for a request under `basePath` before the add-on routed it
   * (API key, tenant header), in the add-on's own error shape; absent: the native body.
   */
  readonly errorResponse?: (c: Ctx, err: unknown) => Response;
}
