/**
 * The engine's public surface. The run service calls, in order:
 *
 * 1. `prepareRun(deps, request)` — synchronous; 422 for a bad model, capability, client tool or
 *    `resume_payload` shape;
 * 2. `loadStart(deps, prepared, { tenant_id, session_id, run_id, request })` — one store read
 *    (the start checkpoint and the conversation); 404 for an unknown `checkpoint_id`, 409 for a
 *    used message id, 422 for a resume that does not fit the pending calls;
 * 3. creates the run with `parent_checkpoint_id` and the plan's `begin` (the session when new, a
 *    fork's conversation, the input messages) in one transaction;
 * 4. `runAgent(deps, prepared, { ..., start }, signal, { finish })` — yields the run's events,
 *    commits every step but the last, hands the last to `finish` (for the outcome's transaction)
 *    and always ends with `run_finished`.
 *
 * `createEngine(deps)` bundles 1+2 as `prepare` and 4 as `execute` (the run service's `Engine`).
 *
 * See docs/engine.md.
 */
export { type BoundEngine, createEngine, type EnginePlan, type RunBegin } from "./engine.ts";
export { activeCapabilities, prepareRun, serverTools, systemPrompt } from "./prepare.ts";
export { loadStart, waitingToolCalls } from "./start.ts";
export { runAgent } from "./run.ts";
export { applyStateUpdate } from "./state.ts";
export { ResumePayloadSchema } from "./types.ts";
export type {
  EngineDeps,
  InterruptPayload,
  PendingAnswer,
  PendingKind,
  PendingToolCall,
  PreparedRun,
  ResumePayload,
  RunIds,
  RunInput,
  RunOptions,
  RunResult,
  StartAnswer,
  StartState,
} from "./types.ts";
export { makeEvent } from "./events.ts";
export type { EndNotice, RunEvent, RunEventKind, RunEventOf, RunEventPayloads } from "./events.ts";
