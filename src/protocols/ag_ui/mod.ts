/**
 * The AG-UI add-on: `POST <base>/run` speaks the AG-UI 1.0 protocol (RunAgentInput in, AG-UI SSE
 * events out) on top of ordinary native runs, and `POST <base>/connect` gives a reloaded front end
 * its thread and the run in progress back. The request's wire shapes live in `schemas.ts`, reading
 * it in `input.ts`, its native run request in `request.ts` (its `resume` entries in
 * `resume_payload.ts`), the event encoder in `encoder.ts` (with `messages.ts` and `outcome.ts`),
 * the client's view at a cursor in `thread_fold.ts`; see docs/ag-ui.md.
 */
export { agUiAddOn } from "./addon.ts";
export type { AgUiSettings } from "./routes.ts";
