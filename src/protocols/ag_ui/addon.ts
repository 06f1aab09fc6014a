/**
 * The AG-UI add-on as the app mounts it: its run route under the configured base path and the
 * operation the API reference lists for it.
 */
import { type AddOn, BODY_ERRORS, type OperationSpec } from "../../http/kit/mod.ts";
import { RunAgentInputSchema } from "./input.ts";
import { agUiRoutes } from "./routes.ts";

/** The add-on for a manifest's `protocol { ag_ui { path = ... } }` block. */
export function agUiAddOn(settings: { path: string }): AddOn {
  const basePath = settings.path.replace(/\/+$/, "");
  return {
    name: "ag_ui",
    basePath,
    routes: agUiRoutes(),
    publicPaths: [],
    tag: {
      name: "AG-UI",
      description: "The AG-UI add-on (`protocol { ag_ui {} }`): runs for front ends.",
    },
    operations: agUiOperations(basePath),
    schemas: [["AgUiRunAgentInput", RunAgentInputSchema]],
  };
}

function agUiOperations(at: string): OperationSpec[] {
  return [{
    method: "post",
    path: `${at}/run`,
    operationId: "agUiRun",
    tag: "AG-UI",
    summary: "Run the agent (AG-UI RunAgentInput in, AG-UI events out)",
    description: "An attached native run: same sessions (`threadId`), records, cancellation " +
      "(closing the stream cancels the run) and re-attach as `/v1`. `forwardedProps.model` " +
      "may carry a `ModelConfig`. See docs/ag-ui.md.",
    body: { schema: RunAgentInputSchema, required: true },
    success: {
      status: 200,
      description: "The run as AG-UI events.",
      sse: {
        description: "AG-UI events: each frame has `event: <TYPE>` and `data:` the AG-UI event " +
          "as JSON (camelCase): RUN_STARTED, TEXT_MESSAGE_*, TOOL_CALL_*, STATE_*, " +
          "MESSAGES_SNAPSHOT, STEP_*, CUSTOM, then RUN_FINISHED or RUN_ERROR.",
      },
      headers: { "x-run-id": "The run's id.", "x-session-id": "The session (thread) id." },
    },
    errors: [...BODY_ERRORS, 404004, 409002, 409003, 503002],
  }];
}
