/**
 * The A2A view of native records, without I/O: a task is a chain of runs in one session (the
 * first run's id is the task id, the session id the context id; each further turn is a run that
 * continues the chain), its status the latest run's, its assistant messages text artifacts, the
 * context the latest run leaves the structured `state` artifact, every turn's user and assistant
 * messages the task history. The stream encoder builds the same objects, so a streamed task and a
 * read task agree.
 */
import { type FinishReason, roundCost, totalUsage, type Usage } from "../../api/usage.ts";
import { camelSource, type SourceFields } from "../../api/events.ts";
import type { Message as NativeMessage, Run, RunError, RunStatus } from "../../api/schemas.ts";
import type { ChainState } from "../../runs/reads.ts";
import { ALL_OUTPUT_MODES, describe, type OutputModes, pendingCalls } from "./request.ts";
import type { Artifact, Message, Part, Task, TaskState, TaskStatus } from "./responses.ts";
import type { MessageInput } from "./schemas.ts";

/** Run status → task state (docs/a2a.md). */
export function taskState(status: RunStatus): TaskState {
  switch (status) {
    case "queued":
      return "TASK_STATE_SUBMITTED";
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

/** The extension of the `sources` artifacts (docs/a2a.md#sources-and-reasoning). */
export const SOURCES_EXTENSION = "urn:agentd:a2a:sources:v1";
/** The extension of the `reasoning` artifacts (docs/a2a.md#sources-and-reasoning). */
export const REASONING_EXTENSION = "urn:agentd:a2a:reasoning:v1";

/**
 * The `sources` artifact of assistant message `messageId`: a data part per source the answer used
 * or cites (`{sourceId, sourceType, url, title, mediaType, filename, citedText}`, those it has).
 */
export function sourcesArtifact(messageId: string, sources: SourceFields[]): Artifact {
  return {
    artifactId: `${messageId}:sources`,
    name: "sources",
    description: "Sources the answer used, and the passages it cites",
    parts: sources.map((s) => ({ data: camelSource(s), mediaType: "application/json" })),
    extensions: [SOURCES_EXTENSION],
  };
}

/**
 * The `reasoning` artifact of one reasoning block (its id is the block's): a data part
 * `{text, messageId}`, `messageId` the assistant message (the `response` artifact) it leads to.
 */
export function reasoningArtifact(id: string, messageId: string, text: string): Artifact {
  return {
    artifactId: id,
    name: "reasoning",
    description: "The model's reasoning before an answer",
    parts: [{ data: { text, messageId }, mediaType: "application/json" }],
    extensions: [REASONING_EXTENSION],
  };
}

/** agentd's own extensions, on every card: the data its artifacts carry beside the answer. */
export const AGENTD_EXTENSIONS = [
  {
    uri: SOURCES_EXTENSION,
    description: "`sources` artifacts: the sources an answer used and the passages it cites, " +
      "a data part each (application/json output)",
    required: false,
  },
  {
    uri: REASONING_EXTENSION,
    description: "`reasoning` artifacts: the model's reasoning before an answer, a data part " +
      "{text, messageId} per block, streamed only (application/json output)",
    required: false,
  },
];

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
 * The status message of a run of task `taskId`: for input-required, what the agent waits for and
 * how to answer (text, plus a data part listing the pending calls); for failed, the error. None
 * otherwise. Its id is the run's, so each turn's is distinct.
 */
export function statusMessage(run: RunOutcomeView, taskId = run.run_id): Message | undefined {
  const parts = statusParts(run);
  if (!parts) return undefined;
  return {
    messageId: `${run.run_id}:status`,
    contextId: run.session_id,
    taskId,
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

/** A task status: state, status message, time (the run belongs to task `taskId`). */
export function taskStatus(
  run: RunOutcomeView,
  timestamp: string,
  taskId = run.run_id,
): TaskStatus {
  const message = statusMessage(run, taskId);
  return { state: taskState(run.status), ...(message ? { message } : {}), timestamp };
}

/**
 * A native message as an A2A history message of task `taskId`: user → ROLE_USER (text and data
 * parts), assistant → ROLE_AGENT (its text). Tool traffic and system messages are the agent's own
 * business (A2A execution is opaque) and are left out, as is an assistant turn without text.
 */
export function historyMessage(m: NativeMessage, taskId = m.run_id): Message | null {
  if (m.role !== "user" && m.role !== "assistant") return null;
  const parts: Part[] = m.content.flatMap((p): Part[] => {
    if (p.type === "text") {
      return p.value === "" && m.role === "assistant" ? [] : [{ text: p.value }];
    }
    if (p.type === "source") return [];
    return m.role === "user" ? [{ data: p.value, mediaType: "application/json" }] : [];
  });
  if (m.role === "assistant" && parts.length === 0) return null;
  return {
    messageId: m.message_id,
    contextId: m.session_id,
    ...(taskId ? { taskId } : {}),
    role: m.role === "user" ? "ROLE_USER" : "ROLE_AGENT",
    parts,
  };
}

/**
 * What a turn's link keeps: the client's message, when it answered the calls a task waited for
 * (an answer is not added to the conversation, so the link is where history finds it).
 */
export interface TurnNote {
  message: Message;
}

/** The note of a turn answered by `message` (its parts as sent: text and data). */
export function turnNote(message: MessageInput, contextId: string, taskId: string): TurnNote {
  return {
    message: {
      messageId: message.messageId,
      contextId,
      taskId,
      role: "ROLE_USER",
      parts: message.parts.map((p): Part =>
        p.text !== undefined && p.text !== null
          ? { text: p.text }
          : { data: p.data ?? null, mediaType: "application/json" }
      ),
    },
  };
}

/** The message of a link's note, when it holds one (notes are read defensively). */
export function noteMessage(note: unknown): Message | null {
  const message = (note as { message?: unknown } | null)?.message as Message | undefined;
  if (typeof message?.messageId !== "string" || !Array.isArray(message.parts)) return null;
  return message;
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
  /** `artifacts` present (true, even empty) or absent (false); unset: present when not empty. */
  includeArtifacts?: boolean;
}

/**
 * The task of a chain: one turn per run, oldest first. Artifacts are every turn's assistant texts
 * and the `state` the latest run leaves; history is every turn in order (the message that
 * continued it, its user and assistant messages, and — for a turn that asked for input — the
 * question it asked, its status message); the status is the latest run's.
 */
export function buildTask(chain: ChainState, options: TaskViewOptions = {}): Task {
  const taskId = chain.origin_run_id;
  const modes = options.modes ?? ALL_OUTPUT_MODES;
  const latest = chain.runs[chain.runs.length - 1].run;
  const artifacts: Artifact[] = [];
  if (modes.text) {
    for (const m of chain.runs.flatMap((r) => r.messages)) {
      if (m.role !== "assistant") continue;
      const text = assistantText(m);
      if (text !== "") artifacts.push(textArtifact(m.message_id, text));
    }
  }
  if (modes.json) {
    for (const m of chain.runs.flatMap((r) => r.messages)) {
      const sources = m.content.flatMap((p) => p.type === "source" ? [p] : []);
      if (m.role === "assistant" && sources.length > 0) {
        artifacts.push(sourcesArtifact(m.message_id, sources));
      }
    }
  }
  if (modes.json && chain.context !== null) artifacts.push(stateArtifact(chain.context));

  let history: Message[] = [];
  const limit = options.historyLength;
  if (limit !== 0) {
    chain.runs.forEach(({ run, note, messages }, i) => {
      const answer = noteMessage(note);
      if (answer) history.push(answer);
      for (const m of messages) {
        const shown = historyMessage(m, taskId);
        if (shown) history.push(shown);
      }
      // A turn that asked for input, and was answered: its question stays in the history.
      const asked = i < chain.runs.length - 1 ? statusMessage(run, taskId) : undefined;
      if (asked && run.status === "interrupted") history.push(asked);
    });
    if (limit !== undefined && limit !== null) history = history.slice(-limit);
  }

  const includeArtifacts = options.includeArtifacts ?? artifacts.length > 0;
  const usages = chain.runs.flatMap(({ run }) => run.usage ? [run.usage] : []);
  const costs = chain.runs.flatMap(({ run }) => typeof run.cost === "number" ? [run.cost] : []);
  const metadata = taskMetadata({
    usage: usages.length > 0 ? totalUsage(usages) : null,
    finish_reason: latest.finish_reason,
    cost: costs.length > 0 ? roundCost(costs.reduce((a, b) => a + b, 0)) : null,
  });
  return {
    id: taskId,
    contextId: latest.session_id,
    status: taskStatus(latest, latest.updated_at, taskId),
    ...(includeArtifacts ? { artifacts } : {}),
    ...(history.length > 0 ? { history } : {}),
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * agentd's task metadata: why the model last stopped (`finishReason`: `stop`, `length`,
 * `content_filter`, `refusal`, ...), the tokens used (`usage`, native field names) and, with a
 * model price in the manifest, what they cost (`cost`); undefined when there is none of them.
 */
export function taskMetadata(
  run: { usage?: Usage | null; finish_reason?: FinishReason | null; cost?: number | null },
): Record<string, unknown> | undefined {
  const cost = typeof run.cost === "number" ? run.cost : undefined;
  if (!run.usage && !run.finish_reason && cost === undefined) return undefined;
  return {
    ...(run.finish_reason ? { finishReason: run.finish_reason } : {}),
    ...(run.usage ? { usage: run.usage } : {}),
    ...(cost !== undefined ? { cost } : {}),
  };
}

/** A task's id, context and status alone (a list entry without history or artifacts). */
export function taskHead(taskId: string, latest: Run): Task {
  return {
    id: taskId,
    contextId: latest.session_id,
    status: taskStatus(latest, latest.updated_at, taskId),
  };
}
