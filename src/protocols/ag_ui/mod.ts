/**
 * The AG-UI add-on: `POST <base>/run` speaks the AG-UI 1.0 protocol (RunAgentInput in, AG-UI SSE
 * events out) on top of ordinary native runs. Request mapping lives in `input.ts`, the event
 * encoder in `encoder.ts`; see docs/ag-ui.md.
 */
export { agUiAddOn } from "./addon.ts";
export { loadThread } from "./routes.ts";
export { AgUiEncoder, agUiFrame, agUiFrames, outcomeOf, toAgUiMessage } from "./encoder.ts";
export type { AgUiEvent, EncoderOptions } from "./encoder.ts";
export { parseRunInput, RunAgentInputSchema, toRunRequest } from "./input.ts";
export type { AgUiRunInput, MappedRun, ThreadView } from "./input.ts";
export { openInterrupts } from "./interrupts.ts";
export type { OpenInterrupt } from "./interrupts.ts";
