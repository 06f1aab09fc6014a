/**
 * The state a run starts from: the fork checkpoint or the session's latest one, the conversation,
 * and the answers to the tool calls that checkpoint left pending. Loaded before the run record
 * exists, so an unknown checkpoint or an incomplete resume never creates a run.
 */
import type { Message, MessageInput } from "../api/schemas.ts";
import { checkSessionRoom, jsonSize } from "./size.ts";
import { systemClock } from "../clock.ts";
import type { FieldError } from "../errors.ts";
import { engineErrors } from "./errors.ts";
import { newMessages } from "../store/mod.ts";
import { unansweredToolCalls } from "./conversation.ts";
import type { ResumePayload } from "../api/schemas.ts";
import type {
  EngineDeps,
  PendingAnswer,
  PendingToolCall,
  RunIds,
  RunSetup,
  StartAnswer,
  StartState,
} from "./types.ts";

/**
 * Loads and validates the start state of a run with one store read (`readStart`: one checkpoint
 * and one conversation, however long the session; none for a new session). Throws an
 * `EngineError`: `checkpoint_not_found` for an unknown `checkpoint_id`, `message_exists` for an
 * input `message_id` the conversation already has, and `invalid_request` on `resume_payload`
 * (`nothing_to_resume`, `missing_tool_result`, `unknown_tool_call`, `duplicate_answer`). Reads
 * only; writes nothing.
 */
export async function loadStart(
  deps: EngineDeps,
  setup: RunSetup,
  input: RunIds & {
    request: {
      session_id?: string | null;
      checkpoint_id?: string | null;
      messages: MessageInput[];
    };
  },
): Promise<StartState> {
  const { tenant_id, session_id, run_id, request } = input;
  const forkId = request.checkpoint_id || null;
  // A request that names no session starts one under an id just generated: nothing to read.
  const read = request.session_id
    ? await deps.store.readStart(tenant_id, session_id, forkId)
    : { clock: null, checkpoint: null, messages: [] };
  const checkpoint = read.checkpoint;
  if (forkId && !checkpoint) throw engineErrors.checkpointNotFound(forkId);
  const conversation = read.messages;
  // A reused message id would only fail inside the run; say so before the run exists.
  const taken = new Set(conversation.map((m) => m.message_id));
  for (const m of request.messages) {
    if (m.message_id && taken.has(m.message_id)) throw engineErrors.messageExists(m.message_id);
  }
  const held = checkSessionRoom(conversation, request.messages, deps.config.manifest.runtime);

  const pending = waitingToolCalls(checkpoint?.state.pending_tool_calls ?? [], conversation);
  const answered = answerPending(pending, setup.resume, request.messages);
  const answers = startAnswers(conversation, answered);
  const now = (deps.clock ?? systemClock).now();
  const records = answers.length === 0
    ? newMessages(session_id, request.messages, run_id, now)
    : [];

  return {
    parent_checkpoint_id: checkpoint?.checkpoint_id ?? null,
    fork_checkpoint_id: forkId,
    session_exists: read.clock !== null,
    clock: read.clock ?? 0,
    conversation,
    bytes: records.reduce((sum, m) => sum + jsonSize(m), held),
    context: checkpoint?.state.context ?? null,
    step: checkpoint?.state.step ?? 0,
    answers,
    input: records,
  };
}

/**
 * The tool calls of the conversation that need an answer before the model runs again, in
 * conversation order: pending calls with their answers, and calls left unfinished by a run that
 * was cancelled or lost (closed as incomplete).
 */
function startAnswers(
  conversation: Message[],
  answered: { call: PendingToolCall; answer: PendingAnswer }[],
): StartAnswer[] {
  const byId = new Map(answered.map((p) => [p.call.tool_call_id, p.answer]));
  return unansweredToolCalls(conversation).map((call) => ({
    call,
    answer: byId.get(call.id) ?? { kind: "incomplete" as const },
  }));
}

/**
 * Pairs every pending call with its answer. A run resumes when it has a `resume_payload` or its
 * messages hold a `tool` message for a pending client call; a resuming run must answer every
 * pending call. A run that does not resume closes them as unanswered.
 */
export function answerPending(
  pending: PendingToolCall[],
  resume: ResumePayload | null,
  inputMessages: MessageInput[],
): { call: PendingToolCall; answer: PendingAnswer }[] {
  if (pending.length === 0) {
    if (resume) {
      throw engineErrors.invalidRequest([{
        field: "resume_payload",
        errors: [{
          code: "nothing_to_resume",
          message: "the session has no pending tool calls to resume",
        }],
      }]);
    }
    return [];
  }

  const byId = new Map(pending.map((p) => [p.tool_call_id, p]));
  const answers = new Map<string, PendingAnswer>();
  const fields: FieldError[] = [];
  const entryError = (field: string, code: string, message: string) =>
    fields.push({ field, errors: [{ code, message }] });
  const claim = (id: string, kind: PendingToolCall["kind"], field: string, a: PendingAnswer) => {
    const call = byId.get(id);
    if (!call || call.kind !== kind) {
      const why = call
        ? `'${id}' waits for ${call.kind === "approval" ? "an approval" : "a tool result"}`
        : `'${id}' is not a pending tool call`;
      entryError(field, "unknown_tool_call", why);
    } else if (answers.has(id)) {
      entryError(field, "duplicate_answer", `'${id}' is answered more than once`);
    } else {
      answers.set(id, a);
    }
  };

  inputMessages.forEach((m, i) => {
    // Only tool messages that answer a pending client call are answers; others are plain input.
    if (m.role === "tool" && m.tool_call_id && byId.get(m.tool_call_id)?.kind === "client_tool") {
      claim(m.tool_call_id, "client_tool", `messages.${i}.tool_call_id`, {
        kind: "input_message",
        index: i,
      });
    }
  });
  resume?.tool_results?.forEach((r, i) =>
    claim(r.tool_call_id, "client_tool", `resume_payload.tool_results.${i}.tool_call_id`, {
      kind: "result",
      result: r.result,
      is_error: r.is_error ?? false,
    })
  );
  resume?.approvals?.forEach((a, i) =>
    claim(
      a.tool_call_id,
      "approval",
      `resume_payload.approvals.${i}.tool_call_id`,
      a.approved ? { kind: "approved" } : { kind: "rejected", reason: a.reason },
    )
  );

  const resuming = resume !== null || answers.size > 0;
  if (resuming) {
    const missing = pending.filter((p) => !answers.has(p.tool_call_id)).map((p) => p.tool_call_id);
    if (missing.length > 0) {
      fields.push({
        field: "resume_payload",
        errors: [{
          code: "missing_tool_result",
          message: `pending tool calls without an answer: ${missing.join(", ")}`,
          params: { tool_call_ids: missing },
        }],
      });
    }
  }
  if (fields.length > 0) throw engineErrors.invalidRequest(fields);
  return pending.map((call) => ({
    call,
    answer: answers.get(call.tool_call_id) ?? { kind: "unanswered" },
  }));
}

/**
 * The one rule for which of a checkpoint's pending tool calls still wait: a pending call only
 * counts while the conversation still holds the assistant's call and no answer to it (the
 * messages API may have deleted the call or added its tool message since). Malformed stored
 * entries are dropped.
 */
export function waitingToolCalls(
  stored: readonly Record<string, unknown>[],
  messages: Message[],
): PendingToolCall[] {
  const open = new Set(unansweredToolCalls(messages).map((c) => c.id));
  return stored.flatMap(asPending).filter((p) => open.has(p.tool_call_id));
}

/** Reads one stored pending call; anything malformed is dropped rather than failing runs. */
function asPending(raw: Record<string, unknown>): PendingToolCall[] {
  const { tool_call_id, tool_name, arguments: args, kind } = raw;
  if (typeof tool_call_id !== "string" || typeof tool_name !== "string") return [];
  if (kind !== "client_tool" && kind !== "approval") return [];
  const argsObj = args && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
  return [{ tool_call_id, tool_name, arguments: argsObj, kind }];
}
