/**
 * The engine as one object for the run service: `prepare` does every check that must come before
 * the run record exists, `execute` runs the plan it returned.
 */
import type { RunRequest } from "../api/schemas.ts";
import type { NewRun } from "../store/mod.ts";
import type { RunEvent } from "../api/events.ts";
import { prepareRun } from "./prepare.ts";
import { runAgent } from "./run.ts";
import { loadStart } from "./start.ts";
import type { EngineDeps, RunIds, RunOptions, RunSetup, StartState } from "./types.ts";

/** What the run record's transaction writes besides the run: the session, a fork, the input. */
export type RunBegin = Pick<
  NewRun,
  "create_session" | "expect_clock" | "fork_checkpoint_id" | "messages"
>;

/** A run ready to execute: its setup, its start state and its request. */
export interface EnginePlan {
  /** What `prepareRun` checked and resolved. */
  setup: RunSetup;
  /** The start state `loadStart` read. */
  start: StartState;
  /** The run request as the client sent it. */
  request: RunRequest;
  /** The checkpoint the run continues from; the run record's `parent_checkpoint_id`. */
  parent_checkpoint_id: string | null;
  /** The rest of the run record's transaction (`Store.createRun`). */
  begin: RunBegin;
}

/** The engine bound to its dependencies, as the run service uses it. */
export interface Engine {
  /**
   * `prepareRun` then `loadStart`: throws a `ModelConfigError` (the model) or an `EngineError`
   * (capabilities, client tools, resume payload, checkpoint, a used message id) and writes nothing.
   */
  prepare(ids: RunIds, request: RunRequest): Promise<EnginePlan>;
  /**
   * Runs a plan in a session and run that now exist (`createRun` with the plan's `begin`); the
   * last event is `run_finished`.
   */
  execute(plan: EnginePlan, ids: RunIds, signal: AbortSignal, options?: RunOptions): AsyncGenerator<
    RunEvent
  >;
}

/** Binds the engine to its dependencies (one per app). */
export function createEngine(deps: EngineDeps): Engine {
  return {
    async prepare(ids, request) {
      const setup = prepareRun(deps, request);
      const start = await loadStart(deps, setup, { ...ids, request });
      return {
        setup,
        start,
        request,
        parent_checkpoint_id: start.parent_checkpoint_id,
        begin: {
          create_session: !start.session_exists,
          expect_clock: start.clock,
          fork_checkpoint_id: start.fork_checkpoint_id,
          messages: start.input,
        },
      };
    },
    execute(plan, ids, signal, options) {
      return runAgent(
        deps,
        plan.setup,
        { ...ids, request: plan.request, start: plan.start },
        signal,
        options,
      );
    },
  };
}
