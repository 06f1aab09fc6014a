/**
 * The engine as one object for the run service: `prepare` does every check that must come before
 * the run record exists, `execute` runs what was prepared.
 */
import type { RunRequest } from "../api/schemas.ts";
import type { RunEvent } from "./events.ts";
import { prepareRun } from "./prepare.ts";
import { runAgent } from "./run.ts";
import { loadStart } from "./start.ts";
import type { EngineDeps, PreparedRun, StartState } from "./types.ts";

/** A run ready to execute: the prepared run, its start state and its request. */
export interface EnginePlan {
  prepared: PreparedRun;
  start: StartState;
  request: RunRequest;
  /** The checkpoint the run continues from; the run record's `parent_checkpoint_id`. */
  parent_checkpoint_id: string | null;
}

/** The engine bound to its dependencies. */
export interface BoundEngine {
  /**
   * `prepareRun` then `loadStart`: throws ApiError 422 (model, capabilities, client tools,
   * resume payload) or 404 (checkpoint) and writes nothing.
   */
  prepare(
    tenant: string,
    sessionId: string,
    sessionExists: boolean,
    request: RunRequest,
  ): Promise<EnginePlan>;
  /** Runs a plan in a session and run that now exist; the last event is `run_finished`. */
  execute(
    plan: EnginePlan,
    ids: { tenant_id: string; session_id: string; run_id: string },
    signal: AbortSignal,
  ): AsyncGenerator<RunEvent>;
}

/** Binds the engine to its dependencies (one per app). */
export function createEngine(deps: EngineDeps): BoundEngine {
  return {
    async prepare(tenant, sessionId, sessionExists, request) {
      const prepared = prepareRun(deps, request);
      const start = await loadStart(deps, prepared, {
        tenant_id: tenant,
        session_id: sessionId,
        request,
        session_exists: sessionExists,
      });
      return { prepared, start, request, parent_checkpoint_id: start.parent_checkpoint_id };
    },
    execute(plan, ids, signal) {
      return runAgent(
        deps,
        plan.prepared,
        { ...ids, request: plan.request, start: plan.start },
        signal,
      );
    },
  };
}
