/**
 * The A2A view of native records, without I/O: a run is a task (run id = task id, session id =
 * context id), its status a task state, its assistant messages text artifacts, its context the
 * structured `state` artifact, its user and assistant messages the task history. The stream
 * encoder builds the same objects, so a streamed task and a read task agree.
 */
import type { Message as NativeMessage, Run, RunError, RunStatus } from "../../api/schemas.ts";
import { ALL_OUTPUT_MODES, describe, type OutputModes, pendingCalls } from "./request.ts";
import type { Artifact, Message, Part, Task, TaskState, TaskStatus } from "./schemas.ts";

/** Run status → task state (docs/a2a.md). */
export function taskState(status: RunStatus): TaskState {
  switch (status) {
    case "running":
      return "TASK_STATE_WORKING";
    case "completed":
      return "TASK_STATE_COMPLETED";
    case "failed":
      return "TASK_STATE_FAILED";
    case "cancelled":
      return "TASK_STATE_CANCELED";
    case "interrupted":
      return "TASK_STATE_INPUT_REQUIRED";
  }
}

/** Name of the artifact of each assistant message (its id is the message id). */
export const TEXT_ARTIFACT_NAME = "response";
/** Id and name of the structured state artifact. */
export const STATE_ARTIFACT_ID = "state";

/** The chunk of a text artifact: the assistant message `messageId`'s text (or part of it). */
export function textArtifact(messageId: string, text: string): Artifact {
  return {
    artifactId: messageId,
    name: TEXT_ARTIFACT_NAME,
    description: "Text of an assistant message",
    parts: [{ text }],
  };
}

/** The structured `state` artifact: the agent's context at the end of the run. */
export function stateArtifact(context: Record<string, unknown>): Artifact {
  return {
    artifactId: STATE_ARTIFACT_ID,
    name: STATE_ARTIFACT_ID,
    description: "The agent's structured state (its context) when the run ended",
    parts: [{ data: context, mediaType: "application/json" }],
  };
}

/** What of a finished (or running) run the status message is built from. */
export interface RunOutcomeView {
  run_id: string;
  session_id: string;
  status: RunStatus;
  interrupt_payload: Record<string, unknown> | null;
  error?: RunError | null;
}

/**
 * The status message of a task: for input-required, what the agent waits for and how to answer
 * (text, plus a data part listing the pending calls); for failed, the error. None otherwise.
 */
export function statusMessage(run: RunOutcomeView): Message | undefined {
  const parts = statusParts(run);
  if (!parts) return undefined;
  return {
    messageId: `${run.run_id}:status`,
    contextId: run.session_id,
    taskId: run.run_id,
    role: "ROLE_AGENT",
    parts,
  };
}

function statusParts(run: RunOutcomeView): Part[] | undefined {
  const json = (data: unknown): Part => ({ data, mediaType: "application/json" });
  if (run.status === "failed") {
    const error = run.error ?? { code: "failed", message: "the run failed" };
    return [{ text: error.message }, json({ error })];
  }
  if (run.status !== "interrupted") return undefined;
  const payload = run.interrupt_payload;
  const pending = pendingCalls(payload);
  if (pending.length > 0) {
    return [
      { text: waitingText(pending) },
      json({
        reason: "tool_calls",
        pending: pending.map((p) => ({
          toolCallId: p.tool_call_id,
          toolName: p.tool_name,
          arguments: p.arguments,
          kind: p.kind,
        })),
      }),
    ];
  }
  if (payload?.reason === "max_steps") {
    return [
      {
        text: `The run used all of its ${payload.max_steps} model steps; ` +
          `send a message to this task to go on.`,
      },
      json({ reason: "max_steps", maxSteps: payload.max_steps }),
    ];
  }
  const reason = typeof payload?.reason === "string"
    ? payload.reason
    : run.error?.code ?? "interrupted";
  return [
    {
      text: `${
        run.error?.message ?? "The run was interrupted"
      }; send a message to this task to go on.`,
    },
    json({ reason, ...(run.error ? { error: run.error } : {}) }),
  ];
}

/** How to answer the pending calls, in words (the data part lists them by id). */
function waitingText(pending: ReturnType<typeof pendingCalls>): string {
  if (pending.every((p) => p.kind === "approval")) {
    return `Approval needed for ${describe(pending)}. Answer "yes" or "no" ` +
      `(or a data part {"approved": true|false, "reason": "..."}).`;
  }
  if (pending.length === 1) {
    return `Run the client tool ${describe(pending)} and send its result ` +
      `(a data part, or text).`;
  }
  return `Waiting for ${describe(pending)}. Answer with a data part {"tool_results": ` +
    `[{"tool_call_id": "...", "result": ...}], "approvals": [{"tool_call_id": "...", ` +
    `"approved": true|false}]}.`;
}

/** A task status: state, status message, time. */
export function taskStatus(run: RunOutcomeView, timestamp: string): TaskStatus {
  const message = statusMessage(run);
  return { state: taskState(run.status), ...(message ? { message } : {}), timestamp };
}

/**
 * A native message as an A2A history message: user → ROLE_USER (text and data parts),
 * assistant → ROLE_AGENT (its text). Tool traffic and system messages are the agent's own
 * business (A2A execution is opaque) and are left out, as is an assistant turn without text.
 */
export function historyMessage(m: NativeMessage): Message | null {
  if (m.role !== "user" && m.role !== "assistant") return null;
  const parts: Part[] = m.content.flatMap((p): Part[] => {
    if (p.type === "text") {
      return p.value === "" && m.role === "assistant" ? [] : [{ text: p.value }];
    }
    return m.role === "user" ? [{ data: p.value, mediaType: "application/json" }] : [];
  });
  if (m.role === "assistant" && parts.length === 0) return null;
  return {
    messageId: m.message_id,
    contextId: m.session_id,
    ...(m.run_id ? { taskId: m.run_id } : {}),
    role: m.role === "user" ? "ROLE_USER" : "ROLE_AGENT",
    parts,
  };
}

/** The text of an assistant message. */
function assistantText(m: NativeMessage): string {
  return m.content.filter((p) => p.type === "text").map((p) => p.value as string).join("");
}

/** Options of a task view. */
export interface TaskViewOptions {
  /** At most this many recent history messages; 0 leaves history out; unset: all. */
  historyLength?: number | null;
  /** Artifacts the client accepts. */
  modes?: OutputModes;
}

/**
 * The task of a run: `messages` are the messages the run added (in conversation order),
 * `context` the agent state to show as the `state` artifact (null: none).
 */
export function buildTask(
  run: Run,
  messages: readonly NativeMessage[],
  context: Record<string, unknown> | null,
  options: TaskViewOptions = {},
): Task {
  const modes = options.modes ?? ALL_OUTPUT_MODES;
  const artifacts: Artifact[] = [];
  if (modes.text) {
    for (const m of messages) {
      if (m.role !== "assistant") continue;
      const text = assistantText(m);
      if (text !== "") artifacts.push(textArtifact(m.message_id, text));
    }
  }
  if (modes.json && context !== null) artifacts.push(stateArtifact(context));

  let history = messages.map(historyMessage).filter((m): m is Message => m !== null);
  const limit = options.historyLength;
  if (limit !== undefined && limit !== null) history = limit === 0 ? [] : history.slice(-limit);

  return {
    id: run.run_id,
    contextId: run.session_id,
    status: taskStatus(run, run.updated_at),
    ...(artifacts.length > 0 ? { artifacts } : {}),
    ...(history.length > 0 ? { history } : {}),
  };
}
