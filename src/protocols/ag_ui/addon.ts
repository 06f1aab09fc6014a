/** The AG-UI add-on as the app mounts it: its run route under the configured base path. */
import type { AddOn } from "../../http/kit/mod.ts";
import { agUiRoutes } from "./routes.ts";

/** The add-on for a manifest's `protocol { ag_ui { path = ... } }` block. */
export function agUiAddOn(settings: { path: string }): AddOn {
  return {
    name: "ag_ui",
    basePath: settings.path.replace(/\/+$/, ""),
    routes: agUiRoutes(),
    publicPaths: [],
    tag: {
      name: "AG-UI",
      description: "The AG-UI add-on (`protocol { ag_ui {} }`): runs for front ends.",
    },
  };
}
