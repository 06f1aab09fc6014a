/**
 * The A2A operations over the run service: send (blocking or not), stream, get, cancel,
 * subscribe. A task is a native run and a context a session, so nothing here stores anything of
 * its own; every request becomes the run-service call the native API makes, and every read of a
 * task or a context is a run-service read.
 */
import type { MessageInput as NativeMessageInput, Run, RunRequest } from "../../api/schemas.ts";
import type { AppServices } from "../../http/kit/mod.ts";
import type { EndNotice, RunEvent } from "../../engine/events.ts";
import { ApiError } from "../../errors.ts";
import { encodeRunEvents, submittedTask } from "./encoder.ts";
import { a2aErrors } from "./errors.ts";
import {
  checkParts,
  checkRole,
  clientTools,
  contextIdOf,
  mergedContext,
  type OutputModes,
  outputModes,
  pendingCalls,
  resumeAnswers,
  userInput,
} from "./request.ts";
import type { SessionState } from "../../runs/reads.ts";
import type { SendMessageRequest, StreamResponse, Task } from "./schemas.ts";
import { buildTask, type TaskViewOptions } from "./task.ts";
import { ClientIdSchema } from "../../api/schemas.ts";

/** Who asks: the app's services and the resolved tenant. */
export interface A2aCall {
  services: AppServices;
  tenant: string;
}

/** A send request mapped onto a run request, ready to start. */
export interface PreparedSend {
  request: RunRequest & { run_id: string; session_id: string };
  modes: OutputModes;
  historyLength?: number | null;
  returnImmediately: boolean;
}

/**
 * Maps `SendMessageRequest` to a run request. A message with the `taskId` of an input-required
 * task answers its pending calls (a new run resuming the session); one with a `contextId`
 * continues that session; one with neither starts a new session.
 */
export async function prepareSend(call: A2aCall, body: SendMessageRequest): Promise<PreparedSend> {
  const { runs } = call.services;
  const message = body.message;
  const configuration = body.configuration ?? {};
  checkRole(message);
  checkParts(message.parts);
  if (message.extensions && message.extensions.length > 0) {
    throw a2aErrors.unsupported("A2A extensions are not supported by this agent", {
      extensions: message.extensions.join(","),
    });
  }
  if (
    (configuration.taskPushNotificationConfig ?? null) !== null ||
    (configuration.pushNotificationConfig ?? null) !== null
  ) {
    throw a2aErrors.pushNotSupported();
  }
  const modes = outputModes(configuration.acceptedOutputModes);
  const tools = clientTools(body.metadata, message.metadata);
  const runId = crypto.randomUUID();
  const common = {
    modes,
    historyLength: configuration.historyLength,
    returnImmediately: configuration.returnImmediately ?? false,
  };
  const withTools = tools.length > 0 ? { tools } : {};

  let sessionId: string | undefined;
  let state: SessionState | null = null;
  if (message.taskId) {
    const run = await runs.getRun(call.tenant, message.taskId);
    if (!run) throw a2aErrors.taskNotFound(message.taskId);
    if (message.contextId && message.contextId !== run.session_id) {
      throw a2aErrors.invalid(
        `contextId '${message.contextId}' is not the context of task '${run.run_id}'`,
        [{
          field: "message.contextId",
          description: `task '${run.run_id}' is in '${run.session_id}'`,
        }],
      );
    }
    state = await runs.sessionState(call.tenant, run.session_id);
    assertWaitingForInput(run, state);
    sessionId = run.session_id;
    const pending = pendingCalls(run.interrupt_payload);
    if (pending.length > 0) {
      // The message is the answer, not conversation: the calls get their results, and nothing
      // else is added to the conversation (the run continues from there).
      return {
        ...common,
        request: {
          session_id: sessionId,
          run_id: runId,
          messages: [],
          resume_payload: { ...resumeAnswers(pending, message) },
          ...withTools,
        },
      };
    }
    // Interrupted without pending calls (max_steps, shutdown): the message simply goes on.
  } else if (message.contextId) {
    sessionId = contextIdOf(message.contextId);
    state = await runs.sessionState(call.tenant, sessionId);
  }

  const input = userInput(message);
  const session = sessionId ?? crypto.randomUUID();
  let context: Record<string, unknown> | undefined;
  if (input.data.length > 0) context = mergedContext(state?.context ?? null, input.data);
  const userMessage: NativeMessageInput = {
    message_id: nativeMessageId(state, message.messageId),
    role: "user",
    content: input.content,
  };
  return {
    ...common,
    request: {
      session_id: session,
      run_id: runId,
      messages: [userMessage],
      ...(context ? { context } : {}),
      ...withTools,
    },
  };
}

/**
 * The A2A `messageId` as the native message id when the native API can take it (an id it
 * accepts, not yet used in the session), so history shows the client's id; a fresh one otherwise.
 */
function nativeMessageId(session: SessionState | null, messageId: string): string {
  if (!ClientIdSchema.safeParse(messageId).success) return crypto.randomUUID();
  if (session?.messages.some((m) => m.message_id === messageId)) return crypto.randomUUID();
  return messageId;
}

/**
 * Only an input-required task takes a message: a working one takes no input until it asks, a
 * terminal one none at all (spec: UnsupportedOperationError), and an input-required one only
 * while its session has not moved on since (another run answered or abandoned its calls).
 */
function assertWaitingForInput(run: Run, session: SessionState | null): void {
  if (run.status === "running") {
    throw a2aErrors.unsupported(
      `task '${run.run_id}' is working; it accepts a message only once it is input-required`,
      { taskId: run.run_id, state: "TASK_STATE_WORKING" },
    );
  }
  if (run.status !== "interrupted") {
    throw a2aErrors.unsupported(
      `task '${run.run_id}' is in a terminal state (${run.status}) and accepts no more messages; ` +
        `send a message with its contextId to go on in the same context`,
      { taskId: run.run_id, state: run.status },
    );
  }
  const latest = session?.checkpoint_id ?? null;
  if (run.checkpoint_id && latest && latest !== run.checkpoint_id) {
    throw a2aErrors.unsupported(
      `task '${run.run_id}' no longer waits for input: its context has moved on since`,
      { taskId: run.run_id },
    );
  }
}

/** Reads a task: the run, the messages it added, and the context it leaves. Null when absent. */
export async function loadTask(
  call: A2aCall,
  taskId: string,
  options: TaskViewOptions = {},
): Promise<Task | null> {
  const state = await call.services.runs.runState(call.tenant, taskId);
  return state && buildTask(state.run, state.messages, state.context, options);
}

/** Reads a task or throws TaskNotFoundError. */
export async function getTask(
  call: A2aCall,
  taskId: string,
  options: TaskViewOptions = {},
): Promise<Task> {
  const task = await loadTask(call, taskId, options);
  if (!task) throw a2aErrors.taskNotFound(taskId);
  return task;
}

/**
 * `message:send`: starts the run and answers the task, by default once the run is terminal or
 * input-required, with `returnImmediately` at once (the task is then working).
 */
export async function sendMessage(call: A2aCall, prepared: PreparedSend): Promise<Task> {
  const { runs } = call.services;
  const view = { historyLength: prepared.historyLength, modes: prepared.modes };
  if (prepared.returnImmediately) {
    const started = await runs.start(call.tenant, prepared.request, false);
    return await getTask(call, started.run_id, view);
  }
  const started = await runs.start(call.tenant, prepared.request, true);
  // The run service persists the outcome before it delivers `run_finished`, so once the events
  // end the record is final.
  for await (const _ of started.events!) { /* drain */ }
  return await getTask(call, started.run_id, view);
}

/**
 * `message:stream`: starts the run attached and yields the task (submitted), then the encoded
 * events up to the final status. The run does not depend on this stream: a client that goes
 * away stops only the frames; the task goes on and stays readable.
 */
export async function streamMessage(
  call: A2aCall,
  prepared: PreparedSend,
): Promise<AsyncIterable<StreamResponse>> {
  const submittedAt = new Date().toISOString();
  const started = await call.services.runs.start(call.tenant, prepared.request, true);
  const ids = { taskId: started.run_id, contextId: started.session_id };
  return (async function* () {
    yield submittedTask(ids.taskId, ids.contextId, submittedAt);
    yield* encodeRunEvents(started.events as AsyncIterable<RunEvent>, {
      ...ids,
      modes: prepared.modes,
    });
  })();
}

/**
 * `tasks/{id}:cancel`: cancels a working task and answers it (canceled). A task that is not
 * working (terminal, or input-required: its run has ended) is not cancelable.
 */
export async function cancelTask(call: A2aCall, taskId: string): Promise<Task> {
  const { runs } = call.services;
  const run = await runs.getRun(call.tenant, taskId);
  if (!run) throw a2aErrors.taskNotFound(taskId);
  if (run.status !== "running") throw a2aErrors.taskNotCancelable(taskId, stateName(run.status));
  try {
    await runs.cancel(call.tenant, taskId);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw a2aErrors.taskNotFound(taskId);
    throw err;
  }
  const after = await runs.getRun(call.tenant, taskId);
  if (!after) throw a2aErrors.taskNotFound(taskId);
  // It may have finished on its own between the read and the cancel.
  if (after.status !== "cancelled") {
    throw a2aErrors.taskNotCancelable(taskId, stateName(after.status));
  }
  return await getTask(call, taskId);
}

/**
 * `tasks/{id}:subscribe`: the task as it is now, then its live events until it ends. A terminal
 * task cannot be subscribed to (UnsupportedOperationError); an input-required one gives its
 * snapshot and ends, as its run is over.
 */
export async function subscribeTask(
  call: A2aCall,
  taskId: string,
): Promise<AsyncIterable<StreamResponse>> {
  const { runs } = call.services;
  const run = await runs.getRun(call.tenant, taskId);
  if (!run) throw a2aErrors.taskNotFound(taskId);
  if (run.status !== "running" && run.status !== "interrupted") {
    throw a2aErrors.unsupported(
      `task '${taskId}' is in a terminal state (${run.status}); read it with GET tasks/${taskId}`,
      { taskId, state: run.status },
    );
  }
  let events: AsyncIterable<RunEvent | EndNotice> | null = null;
  if (run.status === "running") {
    try {
      events = await runs.attach(call.tenant, taskId);
    } catch (err) {
      // Finished between the read and the attach: the snapshot below is its final state.
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    }
  }
  const snapshot = await getTask(call, taskId);
  return (async function* () {
    yield { task: snapshot };
    if (events) {
      yield* encodeRunEvents(events, {
        taskId,
        contextId: run.session_id,
      });
    }
  })();
}

/** A run status in task-state words, for error messages. */
function stateName(status: Run["status"]): string {
  return status === "interrupted" ? "input-required" : status === "cancelled" ? "canceled" : status;
}
