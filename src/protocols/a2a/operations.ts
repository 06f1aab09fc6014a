/**
 * The A2A operations over the run service, shared by both bindings (JSON-RPC and HTTP+JSON): send
 * (blocking or not), stream, get, cancel, subscribe. A task is a native run and a context a
 * session, so nothing here stores anything of its own; every request becomes the run-service call
 * the native API makes, and every read of a task or a context is a run-service read. The bindings
 * only decode requests into these calls and encode what they return (or throw).
 */
import type { MessageInput as NativeMessageInput, Run, RunRequest } from "../../api/schemas.ts";
import type { EndNotice, RunEvent } from "../../engine/events.ts";
import { ApiError } from "../../errors.ts";
import { apiErrorOf } from "../../http/kit/mod.ts";
import type { A2aCall } from "./call.ts";
import { declaredExtensions } from "./card.ts";
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
import type { MessageInput, SendMessageRequest, StreamResponse, Task } from "./schemas.ts";
import { buildTask, type TaskViewOptions } from "./task.ts";
import { ClientIdSchema } from "../../api/schemas.ts";

export type { A2aCall } from "./call.ts";

/** A send request mapped onto a run request, ready to start. */
export interface PreparedSend {
  request: RunRequest & { run_id: string; session_id: string };
  modes: OutputModes;
  historyLength?: number | null;
  returnImmediately: boolean;
  /** The extensions of the request the agent supports (echoed in `A2A-Extensions`). */
  activated: string[];
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
  checkMessageId(message.messageId);
  const activated = activateExtensions(call, message);
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
    activated,
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
  assertNewMessageId(state, message.messageId);
  const userMessage: NativeMessageInput = {
    message_id: message.messageId,
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
 * Extensions (spec §4.6): those the request names (`A2A-Extensions`, `message.extensions`) that
 * the card declares are activated; others are ignored. A required one the request does not name
 * is ExtensionSupportRequiredError.
 */
function activateExtensions(call: A2aCall, message: MessageInput): string[] {
  const declared = declaredExtensions(call.services.config.manifest);
  const requested = new Set([...call.extensions, ...(message.extensions ?? [])]);
  const missing = declared.filter((e) => e.required && !requested.has(e.uri)).map((e) => e.uri);
  if (missing.length > 0) throw a2aErrors.extensionRequired(missing);
  return declared.filter((e) => requested.has(e.uri)).map((e) => e.uri);
}

/**
 * A `messageId` is kept as sent: it becomes the native message id, so it must be one the native
 * API takes (a UUID always is).
 */
function checkMessageId(messageId: string): void {
  const parsed = ClientIdSchema.safeParse(messageId);
  if (!parsed.success) {
    throw a2aErrors.invalid(`messageId '${messageId}' cannot be used by this agent`, [{
      field: "message.messageId",
      description: `${
        parsed.error.issues[0]?.message ?? "invalid"
      } (1 to 128 characters; a UUID fits)`,
    }]);
  }
}

/** A `messageId` already sent in the context is refused, never renamed. */
function assertNewMessageId(session: SessionState | null, messageId: string): void {
  const sent = session?.messages.find((m) => m.message_id === messageId);
  if (sent) throw duplicateMessageId(messageId, sent.run_id);
}

function duplicateMessageId(messageId: string, taskId?: string | null) {
  return a2aErrors.invalid(
    `messageId '${messageId}' was already sent in this context` +
      (taskId ? ` (task '${taskId}')` : "") + `; every message needs a new id`,
    [{ field: "message.messageId", description: "already used in this context" }],
  );
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
  const view = { historyLength: prepared.historyLength, modes: prepared.modes };
  if (prepared.returnImmediately) {
    const started = await startRun(call, prepared, false);
    return await getTask(call, started.run_id, view);
  }
  const started = await startRun(call, prepared, true);
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
  const started = await startRun(call, prepared, true);
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
 * Starts the run of a send. A context whose task is working takes no second one at the same time
 * (natively 409003): A2A has no such state, so it is UnsupportedOperationError naming the context;
 * a `messageId` the context already has (natively 409005, found meanwhile) is InvalidParams.
 */
async function startRun(call: A2aCall, prepared: PreparedSend, attached: boolean) {
  try {
    return await call.services.runs.start(call.tenant, prepared.request, attached);
  } catch (err) {
    const known = apiErrorOf(err);
    const contextId = prepared.request.session_id;
    if (known?.code === 409003) {
      throw a2aErrors.unsupported(
        `context '${contextId}' has a working task; this agent works on one task of a context ` +
          `at a time: send again once it is no longer working, or cancel it`,
        { contextId, state: "TASK_STATE_WORKING" },
      );
    }
    if (known?.code === 409005) {
      const id = prepared.request.messages[0]?.message_id ?? "";
      throw duplicateMessageId(id);
    }
    throw err;
  }
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
