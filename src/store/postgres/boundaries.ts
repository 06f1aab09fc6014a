/**
 * Calling the boundary functions of migration 2 (`agentd_start_run`, `agentd_commit_step`,
 * `agentd_finish_run`), each a run's boundary in one statement: their parameters, and the errors
 * they raise turned into the store's.
 */
import postgres from "postgres";
import type { Message } from "../../api/schemas.ts";
import { ConversationChanged, RunFenced, storeErrors } from "../errors.ts";
import { messageValues } from "../records.ts";
import type { StepCommit } from "../types.ts";

/** Message records as the one JSON parameter the functions of migration 2 take. */
export function messagesParam(messages: Message[]): string {
  return JSON.stringify(messages.map(messageValues));
}

/** The step parameters of `agentd_commit_step` / `agentd_finish_run`, in their order. */
export function stepParams(step: StepCommit) {
  const cp = step.checkpoint;
  return [
    step.tenant_id,
    step.session_id,
    messagesParam(step.messages),
    cp?.checkpoint_id ?? null,
    cp?.parent_id ?? null,
    cp ? JSON.stringify(cp.state) : null,
  ] as const;
}

function uniqueViolation(error: unknown, constraint: string): boolean {
  return error instanceof postgres.PostgresError && error.code === "23505" &&
    error.constraint_name === constraint;
}

/**
 * Turns what the functions of migration 2 raise into our errors: they raise a keyword (`P0001`),
 * the unique indexes a constraint violation.
 */
export function mapWriteError(
  error: unknown,
  ids: { session: string; run?: string; checkpoint?: string; attempt?: number },
) {
  if (error instanceof postgres.PostgresError) {
    if (error.code === "P0001") {
      switch (error.message) {
        case "session_not_found":
          return storeErrors.sessionNotFound(ids.session);
        case "session_busy":
          return storeErrors.sessionBusy(ids.session);
        case "conversation_changed":
          return new ConversationChanged(ids.session);
        case "run_exists":
          return storeErrors.runExists(ids.run ?? "");
        case "checkpoint_not_found":
          return storeErrors.checkpointNotFound(ids.checkpoint ?? "");
        case "message_exists":
          return storeErrors.messageExists(error.detail ?? "");
        case "run_fenced":
          return new RunFenced(ids.run ?? "", ids.attempt ?? 0);
      }
    }
    if (uniqueViolation(error, "messages_current_id")) {
      // "Key (tenant_id, session_id, message_id)=(t, s, m) already exists.": two inputs of one
      // batch.
      const key = /=\((.*)\) already exists/.exec(error.detail ?? "")?.[1] ?? "";
      return storeErrors.messageExists(key.slice(key.lastIndexOf(", ") + 2));
    }
    if (uniqueViolation(error, "runs_run_id_key")) return storeErrors.runExists(ids.run ?? "");
    if (uniqueViolation(error, "runs_one_running")) return storeErrors.sessionBusy(ids.session);
  }
  return error;
}
