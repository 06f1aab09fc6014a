/**
 * The AG-UI add-on: `POST <base>/run` speaks the AG-UI 1.0 protocol (RunAgentInput in, AG-UI SSE
 * events out) on top of ordinary native runs. Request mapping lives in `input.ts`, the event
 * encoder in `encoder.ts`; see docs/ag-ui.md.
 */
export { agUiAddOn } from "./addon.ts";
