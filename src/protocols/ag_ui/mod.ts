/**
 * The AG-UI add-on: `POST <base>/run` speaks the AG-UI 1.0 protocol (RunAgentInput in, AG-UI SSE
 * events out) on top of ordinary native runs, and `POST <base>/connect` gives a reloaded front end
 * its thread and the run in progress back. Request mapping lives in `input.ts`, the event encoder
 * in `encoder.ts`, the client's view at a cursor in `resume.ts`; see docs/ag-ui.md.
 */
export { agUiAddOn } from "./addon.ts";
export type { AgUiSettings } from "./routes.ts";
