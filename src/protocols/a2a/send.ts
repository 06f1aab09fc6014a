/**
 * Sending a message, the A2A operations `SendMessage` and `SendStreamingMessage`: the request
 * mapped onto a run request (a new task, a new task in a context, or the next turn of an
 * input-required task), checked, and started through the run service.
 */
import type { MessageInput as NativeMessageInput, RunRequest } from "../../api/schemas.ts";
import { ClientIdSchema } from "../../api/schemas.ts";
import { apiErrorOf } from "../../http/kit/mod.ts";
import type { ChainState, SessionState } from "../../runs/reads.ts";
import type { RunLink, StartedRun } from "../../runs/service.ts";
import type { A2aCall } from "./call.ts";
import { declaredExtensions } from "./card.ts";
import { type A2aFrame, a2aFrames, submittedTask } from "./encoder.ts";
import { a2aErrors } from "./errors.ts";
import { getTask, latestRun, loadChain, stateName } from "./operations.ts";
import {
  checkParts,
  checkRole,
  clientTools,
  contextIdOf,
  mergedContext,
  multitaskStrategy,
  type OutputModes,
  outputModes,
  pendingCalls,
  resumeAnswers,
  userInput,
} from "./request.ts";
import type { Task } from "./responses.ts";
import type { MessageInput, SendMessageRequest } from "./schemas.ts";
import { noteMessage, taskState, turnNote } from "./task.ts";
import { newId } from "../../ids.ts";

/** A send request mapped onto a run request, ready to start. */
export interface PreparedSend {
  request: RunRequest & { run_id: string; session_id: string };
  /** The task the run is a turn of (the run itself for a new task). */
  taskId: string;
  /** For a message continuing a task: the link of its run to the task's chain. */
  link?: RunLink;
  modes: OutputModes;
  historyLength?: number | null;
  returnImmediately: boolean;
  /** The extensions of the request the agent supports (echoed in `A2A-Extensions`). */
  activated: string[];
}

/**
 * Maps `SendMessageRequest` to a run request. A message with the `taskId` of an input-required
 * task continues that task: a run linked to its chain, answering the calls it waits for (or, when
 * it waits for none, going on with the message); one with a `contextId` starts a new task in that
 * session; one with neither starts a new session.
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
  const strategy = multitaskStrategy(body.metadata, message.metadata);
  const runId = newId();
  const common = {
    modes,
    historyLength: configuration.historyLength,
    returnImmediately: configuration.returnImmediately ?? false,
    activated,
  };
  const withTools = {
    ...(tools.length > 0 ? { tools } : {}),
    ...(strategy ? { multitask_strategy: strategy } : {}),
  };

  let sessionId: string | undefined;
  let state: SessionState | null = null;
  let taskId: string = runId;
  let link: RunLink | undefined;
  if (message.taskId && strategy === "steer" && await working(call, message.taskId)) {
    // A message for a working task, to join it: a steer of its context's running run.
    const latest = latestRun(await loadChain(call, message.taskId));
    sessionId = latest.session_id;
    state = await runs.sessionState(call.tenant, sessionId);
    assertNewMessageId(state, message.messageId);
  } else if (message.taskId) {
    const chain = await loadChain(call, message.taskId);
    const latest = latestRun(chain);
    if (message.contextId && message.contextId !== latest.session_id) {
      throw a2aErrors.invalid(
        `contextId '${message.contextId}' is not the context of task '${chain.origin_run_id}'`,
        [{
          field: "message.contextId",
          description: `task '${chain.origin_run_id}' is in '${latest.session_id}'`,
        }],
      );
    }
    state = await runs.sessionState(call.tenant, latest.session_id);
    assertWaitingForInput(chain, state);
    assertNewMessageId(state, message.messageId, chain);
    sessionId = latest.session_id;
    taskId = chain.origin_run_id;
    const pending = pendingCalls(latest.interrupt_payload);
    if (pending.length > 0) {
      // The message is the answer, not conversation: the calls get their results and nothing is
      // added to the conversation; the link keeps the message, so history shows the turn.
      return {
        ...common,
        taskId,
        link: { origin_run_id: taskId, note: turnNote(message, sessionId, taskId) },
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
    link = { origin_run_id: taskId };
  } else if (message.contextId) {
    sessionId = contextIdOf(message.contextId);
    state = await runs.sessionState(call.tenant, sessionId);
    assertNewMessageId(state, message.messageId);
  }

  const input = userInput(message);
  const session = sessionId ?? newId();
  let context: Record<string, unknown> | undefined;
  if (input.data.length > 0) context = mergedContext(state?.context ?? null, input.data);
  const userMessage: NativeMessageInput = {
    message_id: message.messageId,
    role: "user",
    content: input.content,
  };
  return {
    ...common,
    taskId,
    ...(link ? { link } : {}),
    request: {
      session_id: session,
      run_id: runId,
      messages: [userMessage],
      ...(context ? { context } : {}),
      ...withTools,
    },
  };
}

/** Whether the task's latest run is working (running or queued). */
async function working(call: A2aCall, taskId: string): Promise<boolean> {
  const status = latestRun(await loadChain(call, taskId)).status;
  return status === "running" || status === "queued";
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
 * A `messageId` is kept as sent: it becomes the native message id (or, for an answer, the id of
 * the turn in history), so it must be one the native API takes (a UUID always is).
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

/** A `messageId` already sent in the context (or answering this task) is refused, not renamed. */
function assertNewMessageId(
  session: SessionState | null,
  messageId: string,
  chain?: ChainState,
): void {
  const sent = session?.messages.find((m) => m.message_id === messageId);
  if (sent) throw duplicateMessageId(messageId, sent.run_id);
  if (chain?.runs.some((r) => noteMessage(r.note)?.messageId === messageId)) {
    throw duplicateMessageId(messageId, chain.origin_run_id);
  }
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
 * while its session has not moved on since (another task of the context started meanwhile).
 */
function assertWaitingForInput(chain: ChainState, session: SessionState | null): void {
  const taskId = chain.origin_run_id;
  const run = latestRun(chain);
  if (run.status === "running" || run.status === "queued") {
    throw a2aErrors.unsupported(
      `task '${taskId}' is working; it accepts a message only once it is input-required`,
      { taskId, state: taskState(run.status) },
    );
  }
  if (run.status !== "interrupted") {
    throw a2aErrors.unsupported(
      `task '${taskId}' is in a terminal state (${stateName(run.status)}) and accepts no more ` +
        `messages; send a message with its contextId to go on in the same context`,
      { taskId, state: taskState(run.status) },
    );
  }
  const latest = session?.checkpoint_id ?? null;
  if (run.checkpoint_id && latest && latest !== run.checkpoint_id) {
    throw a2aErrors.unsupported(
      `task '${taskId}' no longer waits for input: its context has moved on since`,
      { taskId },
    );
  }
}

/**
 * `SendMessage`: starts the run and answers the task, by default once the run is terminal or
 * input-required, with `returnImmediately` at once (the task is then working).
 */
export async function sendMessage(call: A2aCall, prepared: PreparedSend): Promise<Task> {
  const view = { historyLength: prepared.historyLength, modes: prepared.modes };
  if (prepared.returnImmediately) {
    const started = await startRun(call, prepared, false);
    return await getTask(call, await taskOf(call, prepared, started), view);
  }
  const started = await startRun(call, prepared, true);
  // The run service persists the outcome before it delivers `run_finished`, so once the events
  // end the record is final.
  for await (const _ of started.events!) { /* drain */ }
  return await getTask(call, await taskOf(call, prepared, started), view);
}

/**
 * The task a send's run is a turn of: the prepared one, or, when the message joined a working
 * task (`steer`), that task.
 */
async function taskOf(call: A2aCall, prepared: PreparedSend, started: StartedRun): Promise<string> {
  if (!started.steered) return prepared.taskId;
  const chain = await call.services.runs.chainState(call.tenant, started.run_id);
  return chain?.origin_run_id ?? started.run_id;
}

/**
 * `SendStreamingMessage`: starts the run attached and yields the task (submitted), then the
 * encoded events up to the run's end (the task's final state, or input-required: subscribe to
 * follow it further). The run does not depend on this stream: a client that goes away stops only
 * the frames; the task goes on and stays readable.
 */
export async function streamMessage(
  call: A2aCall,
  prepared: PreparedSend,
): Promise<AsyncIterable<A2aFrame>> {
  const submittedAt = new Date().toISOString();
  const started = await startRun(call, prepared, true);
  const ids = { taskId: await taskOf(call, prepared, started), contextId: started.session_id };
  // A message that joined a working task (`steer`) streams that task, as it is now, on.
  const first = started.steered
    ? { task: await getTask(call, ids.taskId, { historyLength: 0, modes: prepared.modes }) }
    : submittedTask(ids.taskId, ids.contextId, submittedAt);
  return (async function* () {
    yield { update: first };
    yield* a2aFrames(started.events!, {
      ...ids,
      runId: started.run_id,
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
    return await call.services.runs.start(call.tenant, prepared.request, attached, prepared.link);
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
