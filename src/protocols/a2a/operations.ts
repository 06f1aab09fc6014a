/**
 * The A2A operations over the run service, shared by both bindings (JSON-RPC and HTTP+JSON): send
 * (blocking or not), stream, get, list, cancel, subscribe. The bindings only decode requests into
 * these calls and encode what they return (or throw).
 *
 * A task is a chain of native runs in one session (docs/a2a.md, "Tasks and runs"): its first run
 * is the task (same id), a message answering an input-required task starts a run that continues
 * the chain, and the task's state is its latest run's. A context is a session. Nothing here
 * stores anything of its own: every request becomes the run-service call the native API makes,
 * and every read is a run-service read.
 */
import type { MessageInput as NativeMessageInput, Run, RunRequest } from "../../api/schemas.ts";
import type { RunEventOf, RunStreamItem } from "../../api/events.ts";
import { apiErrorOf, streamAfter } from "../../http/kit/mod.ts";
import type { ChainState, SessionState } from "../../runs/reads.ts";
import type { RunLink } from "../../runs/service.ts";
import { ClientIdSchema } from "../../api/schemas.ts";
import type { A2aCall } from "./call.ts";
import { declaredExtensions } from "./card.ts";
import {
  A2aEncoder,
  type A2aFrame,
  encodeRunEvents,
  submittedTask,
  type TaskCursor,
  taskFrameId,
} from "./encoder.ts";
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
import {
  LIST_PAGE_SIZE,
  type ListTasksRequest,
  type ListTasksResponse,
  type MessageInput,
  type SendMessageRequest,
  type Task,
  type TaskState,
} from "./schemas.ts";
import {
  buildTask,
  noteMessage,
  taskHead,
  taskState,
  type TaskViewOptions,
  turnNote,
} from "./task.ts";

export type { A2aCall } from "./call.ts";

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
  let taskId: string = runId;
  let link: RunLink | undefined;
  if (message.taskId) {
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
  const session = sessionId ?? crypto.randomUUID();
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
  if (run.status === "running") {
    throw a2aErrors.unsupported(
      `task '${taskId}' is working; it accepts a message only once it is input-required`,
      { taskId, state: "TASK_STATE_WORKING" },
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

/** The latest run of a chain. */
function latestRun(chain: ChainState): Run {
  return chain.runs[chain.runs.length - 1].run;
}

/**
 * The chain of task `taskId`, or TaskNotFoundError. A run that continues a task is a turn of it,
 * not a task of its own.
 */
async function loadChain(call: A2aCall, taskId: string): Promise<ChainState> {
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

/**
 * `SendMessage`: starts the run and answers the task, by default once the run is terminal or
 * input-required, with `returnImmediately` at once (the task is then working).
 */
export async function sendMessage(call: A2aCall, prepared: PreparedSend): Promise<Task> {
  const view = { historyLength: prepared.historyLength, modes: prepared.modes };
  if (prepared.returnImmediately) {
    await startRun(call, prepared, false);
    return await getTask(call, prepared.taskId, view);
  }
  const started = await startRun(call, prepared, true);
  // The run service persists the outcome before it delivers `run_finished`, so once the events
  // end the record is final.
  for await (const _ of started.events!) { /* drain */ }
  return await getTask(call, prepared.taskId, view);
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
  const ids = { taskId: prepared.taskId, contextId: started.session_id };
  return (async function* () {
    yield { update: submittedTask(ids.taskId, ids.contextId, submittedAt) };
    yield* encodeRunEvents(started.events!, {
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

/**
 * `SubscribeToTask`: the task as it is now, then its live updates until it reaches a terminal
 * state — across turns: when it becomes input-required the stream says so and stays open, and
 * the run answering it continues the same stream. A terminal task cannot be subscribed to
 * (UnsupportedOperationError). Events from the time of subscribing on.
 *
 * With a `cursor` (the id of the last frame the client got from an earlier stream of this task:
 * `Last-Event-ID`), the snapshot is followed by every frame after the cursor, replayed from the
 * retained events of the turn it names and of the turns after it, then the live ones; a task
 * that ended within the retention window gives its remaining frames, to its final state. Frames
 * no longer retained: 410001.
 */
export async function subscribeTask(
  call: A2aCall,
  taskId: string,
  cursor?: TaskCursor,
): Promise<AsyncIterable<A2aFrame>> {
  const { runs } = call.services;
  // Subscribed before the read, so a turn that starts meanwhile is not missed.
  const follower = await runs.followChain(taskId);
  let snapshot: Task;
  const replays: Replay[] = [];
  let contextId: string;
  try {
    const chain = await loadChain(call, taskId);
    const latest = latestRun(chain);
    contextId = latest.session_id;
    if (cursor) {
      const turns = chain.runs.map((r) => r.run.run_id);
      const from = turns.indexOf(cursor.run ?? taskId);
      if (from < 0) {
        throw a2aErrors.invalid(`the cursor names run '${cursor.run}', not a turn of the task`, [{
          field: "Last-Event-ID",
          description: `not a frame id of task '${taskId}'`,
        }]);
      }
      // The turn the cursor is in, from its frame on; the turns after it, whole.
      for (const [i, runId] of turns.slice(from).entries()) {
        const at = i === 0 ? cursor : undefined;
        const after = at ? streamAfter(at) : 0;
        replays.push({
          runId,
          cursor: at,
          events: await runs.attach(call.tenant, runId, { after, prefix: true }),
        });
      }
    } else {
      if (!["running", "interrupted"].includes(latest.status)) {
        throw a2aErrors.unsupported(
          `task '${taskId}' is in a terminal state (${stateName(latest.status)}); read it ` +
            `with GetTask`,
          { taskId, state: taskState(latest.status) },
        );
      }
      // The first turn's events are on its own run's channel; later turns' on the chain's.
      if (latest.status === "running" && latest.run_id === taskId) {
        const origin = await runs.attach(call.tenant, taskId).catch((err) => {
          // Finished between the read and the attach: the chain's state below tells how.
          if (apiErrorOf(err)?.code === 409004) return null;
          throw err;
        });
        if (origin) replays.push({ runId: taskId, events: origin });
      }
    }
    // Finished between the read and the attach: read it again.
    const ended = !cursor && replays.length === 0 && latest.status === "running" &&
      latest.run_id === taskId;
    snapshot = ended ? await getTask(call, taskId) : buildTask(chain);
  } catch (err) {
    follower.close();
    throw err;
  }
  return followTask(taskId, contextId, snapshot, replays, follower, !!cursor);
}

/** A turn's events the subscription delivers before the chain's live ones. */
interface Replay {
  runId: string;
  /** The client's cursor in this turn (its events start at the run's first one then). */
  cursor?: TaskCursor;
  events: AsyncIterable<RunStreamItem>;
}

/**
 * The frames of a task subscription; ends at a terminal state or when delivery breaks. `resumed`:
 * the client holds the task up to its cursor, so even a terminal snapshot is followed by the
 * frames it missed.
 */
async function* followTask(
  taskId: string,
  contextId: string,
  snapshot: Task,
  replays: Replay[],
  follower: { events: AsyncIterable<RunStreamItem>; close(): void },
  resumed: boolean,
): AsyncGenerator<A2aFrame> {
  try {
    yield { update: { task: snapshot } };
    if (isTerminal(snapshot.status.state) && !resumed) return;
    // Turns already delivered from their own streams; the chain's channel repeats them.
    const replayed = new Set(replays.map((r) => r.runId));
    for (const replay of replays) {
      let last: RunEventOf<"run_finished"> | undefined;
      for await (
        const frame of encodeRunEvents(watchEnd(replay.events, (e) => last = e), {
          taskId,
          contextId,
          runId: replay.runId,
          cursor: replay.cursor,
        })
      ) yield frame;
      if (!last) return;
      if (last.status !== "interrupted") return;
    }
    let encoder: A2aEncoder | null = null;
    let runId = taskId;
    for await (const item of follower.events) {
      if ("notice" in item) return;
      const { event } = item;
      if (event.kind === "run_started") runId = event.run_id;
      if (replayed.has(event.kind === "run_finished" ? event.run_id : runId)) continue;
      if (event.kind === "run_started" || !encoder) encoder = new A2aEncoder({ taskId, contextId });
      for (const [part, update] of encoder.encode(event).entries()) {
        yield item.seq === null
          ? { update }
          : { id: taskFrameId(taskId, runId, item.seq, part), update };
      }
      if (event.kind !== "run_finished") continue;
      encoder = null;
      if (event.status !== "interrupted") return;
    }
  } finally {
    follower.close();
  }
}

/** `items` as they are, telling `onEnd` the `run_finished` among them. */
async function* watchEnd(
  items: AsyncIterable<RunStreamItem>,
  onEnd: (event: RunEventOf<"run_finished">) => void,
): AsyncGenerator<RunStreamItem> {
  for await (const item of items) {
    if (!("notice" in item) && item.event.kind === "run_finished") onEnd(item.event);
    yield item;
  }
}

function isTerminal(state: TaskState): boolean {
  return ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(state);
}

/** A run status in task-state words, for error messages. */
function stateName(status: Run["status"]): string {
  return status === "interrupted" ? "input-required" : status === "cancelled" ? "canceled" : status;
}
