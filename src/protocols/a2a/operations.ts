/**
 * The A2A operations over the run service, shared by both bindings (JSON-RPC and HTTP+JSON): get,
 * list and cancel here, send (blocking or not) and stream in send.ts, subscribe in subscribe.ts,
 * and the chain lookups they all use. The bindings only decode requests into these calls and
 * encode what they return (or throw).
 *
 * A task is a chain of native runs in one session (docs/a2a.md, "Tasks and runs"): its first run
 * is the task (same id), a message answering an input-required task starts a run that continues
 * the chain, and the task's state is its latest run's. A context is a session. Nothing here
 * stores anything of its own: every request becomes the run-service call the native API makes,
 * and every read is a run-service read.
 */
import type { Run } from "../../api/schemas.ts";
import { apiErrorOf } from "../../http/kit/mod.ts";
import type { ChainState } from "../../runs/reads.ts";
import type { A2aCall } from "./call.ts";
import { a2aErrors } from "./errors.ts";
import { contextIdOf } from "./request.ts";
import type { ListTasksResponse, Task, TaskState } from "./responses.ts";
import { LIST_PAGE_SIZE, type ListTasksRequest } from "./schemas.ts";
import { buildTask, taskHead, type TaskViewOptions } from "./task.ts";

/** The latest run of a chain. */
export function latestRun(chain: ChainState): Run {
  return chain.runs[chain.runs.length - 1].run;
}

/**
 * The chain of task `taskId`, or TaskNotFoundError. A run that continues a task is a turn of it,
 * not a task of its own.
 */
export async function loadChain(call: A2aCall, taskId: string): Promise<ChainState> {
  const chain = await call.services.runs.chainState(call.tenant, taskId);
  if (!chain) throw a2aErrors.taskNotFound(taskId);
  if (chain.origin_run_id !== taskId) {
    throw a2aErrors.taskNotFoundAsTurn(taskId, chain.origin_run_id);
  }
  return chain;
}

/** Reads a task or throws TaskNotFoundError. */
export async function getTask(
  call: A2aCall,
  taskId: string,
  options: TaskViewOptions = {},
): Promise<Task> {
  return buildTask(await loadChain(call, taskId), options);
}

/** Run statuses of a task state (none: the state is never produced). */
const RUN_STATUSES: Partial<Record<TaskState, Run["status"]>> = {
  TASK_STATE_WORKING: "running",
  TASK_STATE_COMPLETED: "completed",
  TASK_STATE_FAILED: "failed",
  TASK_STATE_CANCELED: "cancelled",
  TASK_STATE_INPUT_REQUIRED: "interrupted",
};

/**
 * `ListTasks`: the tenant's tasks (those started natively too), most recently updated first, each
 * once (a multi-turn task as its latest turn), filtered by context, state and status time, paged
 * by an opaque token. Without `historyLength` a listed task carries no history, without
 * `includeArtifacts` no `artifacts` (spec §3.1.4).
 */
export async function listTasks(
  call: A2aCall,
  request: ListTasksRequest,
): Promise<ListTasksResponse> {
  const { runs } = call.services;
  const pageSize = request.pageSize ?? LIST_PAGE_SIZE.default;
  const state = request.status ?? "TASK_STATE_UNSPECIFIED";
  const status = RUN_STATUSES[state];
  const filter = {
    ...(request.contextId ? { session_id: contextIdOf(request.contextId, "contextId") } : {}),
    ...(state === "TASK_STATE_UNSPECIFIED" ? {} : { statuses: status ? [status] : [] }),
    ...(request.statusTimestampAfter
      ? { updated_since: Date.parse(request.statusTimestampAfter) }
      : {}),
  };
  let page;
  try {
    page = await runs.listChains(call.tenant, filter, {
      per_page: pageSize,
      page: request.pageToken || null,
    });
  } catch (err) {
    if (apiErrorOf(err)?.code === 422000) {
      throw a2aErrors.invalid("pageToken is not a token returned as nextPageToken by ListTasks", [
        { field: "pageToken", description: "not a page token of this list" },
      ]);
    }
    throw err;
  }
  const historyLength = request.historyLength ?? 0;
  const includeArtifacts = request.includeArtifacts ?? false;
  const tasks = await Promise.all(page.items.map(async (head) => {
    if (historyLength === 0 && !includeArtifacts) return taskHead(head.origin_run_id, head.run);
    const chain = await runs.chainState(call.tenant, head.origin_run_id);
    if (!chain) return taskHead(head.origin_run_id, head.run);
    return buildTask(chain, { historyLength, includeArtifacts });
  }));
  return { tasks, nextPageToken: page.next_page ?? "", pageSize, totalSize: page.count };
}

/**
 * `CancelTask`: a working task is cancelled (its running run, through the database, as the native
 * cancel does); an input-required one is ended without going on (a run continuing its chain,
 * recorded cancelled). Either answers the task, canceled. A terminal task is not cancelable.
 */
export async function cancelTask(call: A2aCall, taskId: string): Promise<Task> {
  const { runs } = call.services;
  for (let attempt = 0;; attempt++) {
    const chain = await loadChain(call, taskId);
    const latest = latestRun(chain);
    if (latest.status === "running") {
      await runs.cancel(call.tenant, latest.run_id);
    } else if (latest.status === "interrupted") {
      try {
        await runs.cancelChain(call.tenant, latest, { origin_run_id: taskId });
      } catch (err) {
        // A turn started meanwhile (the session is busy with it): cancel that one instead.
        if (apiErrorOf(err)?.code === 409003 && attempt === 0) continue;
        throw err;
      }
    } else {
      throw a2aErrors.taskNotCancelable(taskId, stateName(latest.status));
    }
    const task = await getTask(call, taskId);
    // It may have finished on its own between the read and the cancel.
    if (task.status.state !== "TASK_STATE_CANCELED") {
      throw a2aErrors.taskNotCancelable(taskId, task.status.state);
    }
    return task;
  }
}

/** A run status in task-state words, for error messages. */
export function stateName(status: Run["status"]): string {
  return status === "interrupted" ? "input-required" : status === "cancelled" ? "canceled" : status;
}
