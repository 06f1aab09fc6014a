/** The AI SDK add-on as the app mounts it: its chat and resume routes under the base path. */
import type { AddOn } from "../../http/kit/mod.ts";
import { aiSdkRoutes, type AiSdkSettings } from "./routes.ts";

/** The add-on for a manifest's `protocol { ai_sdk { path = ... } }` block. */
export function aiSdkAddOn(settings: { path: string } & AiSdkSettings): AddOn {
  return {
    name: "ai_sdk",
    basePath: settings.path.replace(/\/+$/, ""),
    routes: aiSdkRoutes(settings),
    publicPaths: [],
    tag: {
      name: "AI SDK",
      description: "The AI SDK UI add-on (`protocol { ai_sdk {} }`): the chat endpoint " +
        "`useChat` talks to, answering the UI message stream.",
    },
  };
}
