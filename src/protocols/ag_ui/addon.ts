/** The AG-UI add-on as the app mounts it: its run and connect routes under the base path. */
import type { AddOn } from "../../http/kit/mod.ts";
import { agUiRoutes, type AgUiSettings } from "./routes.ts";

/** The add-on for a manifest's `protocol { ag_ui { path = ... } }` block. */
export function agUiAddOn(settings: { path: string } & AgUiSettings): AddOn {
  return {
    name: "ag_ui",
    basePath: settings.path.replace(/\/+$/, ""),
    routes: agUiRoutes(settings),
    publicPaths: [],
    tag: {
      name: "AG-UI",
      description: "The AG-UI add-on (`protocol { ag_ui {} }`): runs for front ends.",
    },
  };
}
