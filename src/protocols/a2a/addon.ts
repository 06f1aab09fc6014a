/**
 * The A2A add-on as the app mounts it: its routes under the configured base path, the agent card
 * also at the host root (where A2A clients look first), and the card paths open without an API
 * key.
 */
import type { AddOn } from "../../http/kit/mod.ts";
import { CARD_PATH } from "./discovery.ts";
import { a2aErrorResponse, a2aRoutes, a2aWellKnownRoutes } from "./routes.ts";

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
    publicPaths: [...new Set([CARD_PATH, `${basePath}${CARD_PATH}`])],
    errorResponse: a2aErrorResponse,
    tag: {
      name: "A2A",
      description: "The A2A add-on (`protocol { a2a {} }`, A2A v1.0, JSON-RPC and HTTP+JSON " +
        "bindings): tasks for other agents.",
    },
  };
}
