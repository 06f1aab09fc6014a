// Over 400 lines: one mapping of every run event kind to the UI message stream, with its state.
/**
 * The AI SDK encoder: a pure mapper from the internal run events to the chunks of the AI SDK UI
 * message stream (`ai` 7, what `useChat` reads), and their SSE framing (`aiSdkFrames`, the add-on's
 * counterpart of the native `nativeFrames`, AG-UI's `agUiFrames` and A2A's `a2aFrames`). One run is
 * one assistant UI message: `start`, a step (`start-step` … `finish-step`) per model step and the
 * tools it called, then `finish`. It does no I/O; its state is what the protocol's ordering needs
 * (open text parts, the calls' input so far, the step) and the agent state, kept whole so each
 * `data-state` part carries all of it. The mapping table is in docs/ai-sdk.md.
 */
import type { UIMessageChunk } from "ai";
import jsonpatch from "fast-json-patch";
import type { RunEvent, RunEventOf, RunStreamItem } from "../../api/events.ts";
import { camelUsage } from "../../api/usage.ts";
import { frameId, sseFrame } from "../../http/kit/mod.ts";
import { approvalCalls, finishReason } from "./outcome.ts";
import { errorText, parseInput, providerExecuted, sourceChunk } from "./parts.ts";

/** A tool call the client knows from an earlier run (a continuation answers it). */
export interface EarlierCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** What the encoder needs to know about the response it writes. */
export interface AiSdkEncoderOptions {
  /** The assistant UI message's id (`start.messageId`). */
  messageId: string;
  /** Calls whose approval the request refused: their error result is `tool-output-denied`. */
  denied?: Iterable<string>;
  /**
   * Calls of the interrupted run this one continues, which the message already holds (a
   * continuation). The results of other calls the stream never showed belong to an earlier
   * message (a new message closed them) and are left out: the client knows no such call.
   */
  held?: Iterable<string>;
  /**
   * A replay (the resume GET) of a run that continues an earlier one: results of these calls are
   * preceded by their input, since a replay starts the message from nothing.
   */
  earlier?: Iterable<EarlierCall>;
}

/** A call whose input is streaming. */
interface OpenCall {
  name: string;
  /** The provider runs it (web search …): its parts say so, and `onToolCall` does not fire. */
  provider: boolean;
  /** The JSON text of its input so far (bounded by the model's output). */
  input: string;
}

/** Maps one run's internal events to UI message stream chunks, in order. */
export class AiSdkEncoder {
  readonly #messageId: string;
  readonly #denied: Set<string>;
  readonly #earlier: Map<string, EarlierCall>;
  #sessionId = "";
  #runId = "";
  #started = false;
  #ended = false;
  #stepOpen = false;
  readonly #openText = new Set<string>();
  readonly #openReasoning = new Set<string>();
  readonly #calls = new Map<string, OpenCall>();
  /** Calls the client has seen (input available), so a result never names an unknown call. */
  readonly #known = new Set<string>();
  #state: Record<string, unknown> = {};

  constructor(options: AiSdkEncoderOptions) {
    this.#messageId = options.messageId;
    this.#denied = new Set(options.denied ?? []);
    this.#earlier = new Map([...options.earlier ?? []].map((c) => [c.toolCallId, c]));
    for (const id of options.held ?? []) this.#known.add(id);
  }

  /** True once `finish` was produced. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The chunks of one internal event. */
  encode(event: RunEvent): UIMessageChunk[] {
    if (this.#ended) return [];
    if (event.kind === "run_started") return this.#start(event.session_id, event.run_id);
    if (event.kind === "run_queued") {
      // The run waits for a free slot: the message starts, a transient data part says why.
      return [...this.#start(event.session_id, event.run_id), {
        type: "data-run_queued",
        id: "run_queued",
        data: { queueDepth: event.queue_depth },
        transient: true,
      }];
    }
    if (event.kind === "run_resumed") {
      // Another attempt goes on from the last checkpoint: the lost attempt's open text and step
      // end here and its unfinished calls are forgotten; a data part says so.
      const opener = this.#start(event.session_id, event.run_id);
      this.#calls.clear();
      return [...opener, ...this.#closeText(), ...this.#closeStep(), {
        type: "data-run_resumed",
        id: "run_resumed",
        data: { attempt: event.attempt },
      }];
    }
    if (event.kind === "run_finished") return this.#finish(event);
    // A stream must open with `start`; the engine always begins with `run_started`.
    if (!this.#started) return [];
    switch (event.kind) {
      case "messages_snapshot":
        // The client holds its conversation; the session's copy is not sent back.
        return [];
      case "messages_added":
        // Messages another request sent to this run (steer): a data part per message, which
        // `useChat` keeps on the assistant message it builds.
        return event.messages.map((m) => ({
          type: "data-messages_added" as const,
          id: m.message_id,
          data: {
            id: m.message_id,
            role: m.role,
            text: m.content.map((p) => p.type === "text" ? p.value : "").join(""),
          },
        }));
      case "step_started":
        if (event.step_name === "tools") return [];
        return [...this.#closeStep(), this.#openStep()];
      case "step_finished":
        // A step is the model's answer and the tools it called: it ends at the next model step.
        return [];
      case "text_message_start":
        this.#openText.add(event.message_id);
        return [{ type: "text-start", id: event.message_id }];
      case "text_message_content":
        if (!this.#openText.has(event.message_id)) return [];
        return [{ type: "text-delta", id: event.message_id, delta: event.delta }];
      case "text_message_end":
        if (!this.#openText.delete(event.message_id)) return [];
        return [{ type: "text-end", id: event.message_id }];
      case "reasoning_message_start":
        this.#openReasoning.add(event.message_id);
        return [{ type: "reasoning-start", id: event.message_id }];
      case "reasoning_message_content":
        if (!this.#openReasoning.has(event.message_id)) return [];
        return [{ type: "reasoning-delta", id: event.message_id, delta: event.delta }];
      case "reasoning_message_end":
        // An encrypted value (redacted thinking) stays with agentd: the client shows no text.
        if (!this.#openReasoning.delete(event.message_id)) return [];
        return [{ type: "reasoning-end", id: event.message_id }];
      case "source":
        return [sourceChunk(event)];
      case "tool_call_start": {
        const provider = event.provider_executed === true;
        this.#calls.set(event.tool_call_id, { name: event.tool_name, input: "", provider });
        return [{
          type: "tool-input-start",
          toolCallId: event.tool_call_id,
          toolName: event.tool_name,
          ...providerExecuted(provider),
        }];
      }
      case "tool_call_args": {
        const call = this.#calls.get(event.tool_call_id);
        if (!call) return [];
        call.input += event.delta;
        return [{
          type: "tool-input-delta",
          toolCallId: event.tool_call_id,
          inputTextDelta: event.delta,
        }];
      }
      case "tool_call_end":
        return this.#inputAvailable(event.tool_call_id);
      case "tool_call_result":
        return this.#result(event);
      case "state_snapshot":
        this.#state = event.context ?? {};
        return [this.#stateChunk()];
      case "state_delta":
        try {
          const next = jsonpatch.applyPatch(
            structuredClone(this.#state),
            event.delta as jsonpatch.Operation[],
            true,
            false,
          ).newDocument;
          if (next === null || typeof next !== "object" || Array.isArray(next)) return [];
          this.#state = next as Record<string, unknown>;
        } catch {
          // The engine only sends patches that applied; one that does not is left out.
          return [];
        }
        return [this.#stateChunk()];
      case "custom":
        return [{
          type: `data-${event.name}`,
          id: event.name,
          data: event.value === undefined ? null : event.value,
        }];
    }
  }

  /**
   * Ends a stream whose run events stopped without `run_finished` (a lost transport, a failure of
   * the encoder's caller): an `error`, then `finish`, unless the stream already ended.
   */
  fail(message: string, code: string): UIMessageChunk[] {
    if (this.#ended) return [];
    const opener = this.#started ? [] : this.#start("", "");
    this.#ended = true;
    return [
      ...opener,
      ...this.#closeText(),
      ...this.#closeStep(),
      { type: "error", errorText: `${message} (${code})` },
      {
        type: "finish",
        finishReason: "error",
        messageMetadata: {
          sessionId: this.#sessionId,
          runId: this.#runId,
          status: "unknown",
          error: { code, message },
        },
      },
    ];
  }

  #start(sessionId: string, runId: string): UIMessageChunk[] {
    if (this.#started) return [];
    this.#started = true;
    this.#sessionId = sessionId;
    this.#runId = runId;
    return [{ type: "start", messageId: this.#messageId, messageMetadata: { sessionId, runId } }];
  }

  #openStep(): UIMessageChunk {
    this.#stepOpen = true;
    return { type: "start-step" };
  }

  #closeStep(): UIMessageChunk[] {
    if (!this.#stepOpen) return [];
    this.#stepOpen = false;
    return [{ type: "finish-step" }];
  }

  /** Ends the open text and reasoning parts (a step or the run ends under them). */
  #closeText(): UIMessageChunk[] {
    const out: UIMessageChunk[] = [
      ...[...this.#openReasoning].map((id): UIMessageChunk => ({ type: "reasoning-end", id })),
      ...[...this.#openText].map((id): UIMessageChunk => ({ type: "text-end", id })),
    ];
    this.#openReasoning.clear();
    this.#openText.clear();
    return out;
  }

  #stateChunk(): UIMessageChunk {
    return { type: "data-state", id: "state", data: this.#state };
  }

  /** The call's input, complete: parsed, or an input error when it is not a JSON object. */
  #inputAvailable(toolCallId: string): UIMessageChunk[] {
    const call = this.#calls.get(toolCallId);
    if (!call) return [];
    this.#calls.delete(toolCallId);
    this.#known.add(toolCallId);
    const input = parseInput(call.input);
    if (input === undefined) {
      return [{
        type: "tool-input-error",
        toolCallId,
        toolName: call.name,
        input: call.input,
        errorText: "the model's arguments are not a JSON object",
      }];
    }
    return [{
      type: "tool-input-available",
      toolCallId,
      toolName: call.name,
      input,
      ...providerExecuted(call.provider),
    }];
  }

  #result(event: RunEventOf<"tool_call_result">): UIMessageChunk[] {
    const id = event.tool_call_id;
    const out: UIMessageChunk[] = [];
    if (!this.#known.has(id)) {
      // A result of a call of an earlier run: known to the client, unless this is a replay.
      const earlier = this.#earlier.get(id);
      if (!earlier) return [];
      out.push({ type: "tool-input-available", ...earlier });
      this.#known.add(id);
    }
    const provider = providerExecuted(event.provider_executed === true);
    if (this.#denied.has(id)) {
      out.push({ type: "tool-output-denied", toolCallId: id });
    } else if (event.is_error) {
      out.push({
        type: "tool-output-error",
        toolCallId: id,
        errorText: errorText(event.content),
        ...provider,
      });
    } else {
      out.push({
        type: "tool-output-available",
        toolCallId: id,
        output: event.content,
        ...provider,
      });
    }
    return out;
  }

  #finish(event: RunEventOf<"run_finished">): UIMessageChunk[] {
    const opener = this.#start(event.session_id, event.run_id);
    this.#ended = true;
    const out: UIMessageChunk[] = [...opener, ...this.#closeText()];
    // Calls the model started but never completed have no input to show: drop them.
    this.#calls.clear();
    const payload = event.interrupt_payload;
    if (event.status === "interrupted" && payload?.reason === "tool_calls") {
      for (const call of approvalCalls(payload.pending)) {
        out.push({
          type: "tool-approval-request",
          approvalId: call.tool_call_id,
          toolCallId: call.tool_call_id,
        });
      }
    }
    out.push(...this.#closeStep());
    const error = event.error ?? null;
    if (event.status === "failed") {
      const code = error?.code ?? "run_failed";
      out.push({ type: "error", errorText: `${error?.message ?? "the run failed"} (${code})` });
    } else if (event.status === "cancelled") {
      out.push({ type: "abort", reason: "the run was cancelled" });
    }
    out.push({
      type: "finish",
      finishReason: finishReason(event),
      messageMetadata: {
        sessionId: event.session_id,
        runId: event.run_id,
        status: event.status,
        ...(event.usage ? { usage: camelUsage(event.usage) } : {}),
        ...(event.finish_reason ? { modelFinishReason: event.finish_reason } : {}),
        ...(typeof event.cost === "number" ? { cost: event.cost } : {}),
        ...(error ? { error: { code: error.code, message: error.message } } : {}),
      },
    });
    return out;
  }
}

/** The end of an AI SDK UI message stream, after `finish`. */
export const DONE_FRAME = "data: [DONE]\n\n";

/** The headers of an AI SDK UI message stream (`x-vercel-ai-ui-message-stream: v1`). */
export const UI_MESSAGE_STREAM_HEADERS = { "x-vercel-ai-ui-message-stream": "v1" } as const;

/**
 * The SSE frames of a run's event stream: each chunk as `data:` (with `id:`, the event's sequence
 * number, `N` then `N.1` … for more chunks of one event), ending with `finish` then `data: [DONE]`;
 * a run that stops without `run_finished` ends with `error` and `finish`.
 */
export async function* aiSdkFrames(
  items: AsyncIterable<RunStreamItem>,
  options: AiSdkEncoderOptions,
): AsyncGenerator<string> {
  const encoder = new AiSdkEncoder(options);
  const frames = function* (seq: number | null, chunks: UIMessageChunk[]): Generator<string> {
    for (const [part, chunk] of chunks.entries()) {
      yield sseFrame(chunk, undefined, seq === null ? undefined : frameId(seq, part));
    }
  };
  try {
    for await (const item of items) {
      if ("notice" in item) {
        yield* frames(null, encoder.fail(`the event stream ended: ${item.notice}`, item.notice));
        break;
      }
      yield* frames(item.seq, encoder.encode(item.event));
      if (encoder.ended) break;
    }
    yield* frames(null, encoder.fail("the run's event stream ended early", "stream_ended"));
  } catch (err) {
    yield* frames(
      null,
      encoder.fail(`the run's event stream failed: ${String(err)}`, "stream_failed"),
    );
  }
  yield DONE_FRAME;
}
