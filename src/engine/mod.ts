/**
 * The engine's public surface: `createEngine(deps)`, the `Engine` the run service uses. Its
 * `prepare` is, in order (prepare.ts, start.ts):
 *
 * 1. `prepareRun` — synchronous; refuses a bad model (`ModelConfigError`), capability, client tool
 *    or `resume_payload` shape (`EngineError` `invalid_request`);
 * 2. `loadStart` — one store read (the start checkpoint and the conversation); `EngineError`
 *    `checkpoint_not_found` for an unknown `checkpoint_id`, `message_exists` for a used message
 *    id, `invalid_request` for a resume that does not fit the pending calls, `too_large` for
 *    input past the session cap and `message_too_large` for a message past its own (size.ts).
 *
 * The run service then creates the run with `parent_checkpoint_id` and the plan's `begin` (the
 * session when new, a fork's conversation, the input messages) in one transaction, and `execute`
 * (`runAgent`, run.ts) yields the run's events, commits every step but the last, hands the last to
 * `finish` (for the outcome's transaction) and always ends with `run_finished`. The events
 * themselves are the stream contract in src/api/events.ts; `waitingToolCalls` is the one rule for
 * which pending tool calls still wait, shared with the run service's reads. The HTTP edge maps
 * the engine's refusals (errors.ts) to status codes.
 *
 * See docs/engine.md.
 */
export { createEngine, type Engine, type EnginePlan, type RunBegin } from "./engine.ts";
export { EngineError, type EngineErrorKind } from "./errors.ts";
export { checkSessionRoom, type SizeLimits } from "./size.ts";
export { RunHandedOff } from "./async.ts";
export { waitingToolCalls } from "./start.ts";
export type {
  EngineDeps,
  InterruptPayload,
  PendingAnswer,
  PendingKind,
  PendingToolCall,
  RunIds,
  RunInput,
  RunOptions,
  RunResult,
  RunSetup,
  StartAnswer,
  StartState,
} from "./types.ts";
