/**
 * The AG-UI encoder: a pure mapper from the internal run events to AG-UI 1.0 events (camelCase,
 * integer millisecond timestamps, optional fields omitted rather than null), and the SSE framing
 * of those events (`agUiFrames`, the add-on's counterpart of the native `nativeFrames` and A2A's
 * `a2aFrames`). It does no I/O; the only state it keeps is what it needs to guarantee the
 * ordering the official client checks: nothing after the terminal event, and every message, tool
 * call and step that was opened closed before `RUN_FINISHED`. Stored messages are written by
 * messages.ts, a finished run's outcome by outcome.ts.
 */
import {
  type Event as AgUiEvent,
  EventType,
  type JsonPatchOperation,
  PROTOCOL_VERSION,
  type RunFinishedEvent,
} from "@ag-ui/core";
import {
  camelSource,
  type RunEvent,
  type RunEventOf,
  type RunStreamItem,
} from "../../api/events.ts";
import { camelUsage } from "../../api/usage.ts";
import { type Cursor, frameId, isAfter, sseFrame } from "../../http/kit/mod.ts";
import { contentText, textMessageEvents, toAgUiMessage } from "./messages.ts";
import { reasoningEvents } from "./model_output.ts";
import { outcomeOf } from "./outcome.ts";
import { ThreadFold } from "./thread_fold.ts";

/** What the encoder needs to know about the request it answers. */
export interface AgUiEncoderOptions {
  /**
   * Ids of the messages the client sent in this request. A `tool` message the client wrote to
   * answer its own tool call is already in the client's list; echoing it as `TOOL_CALL_RESULT`
   * would make the official client insert it a second time.
   */
  clientMessageIds?: Iterable<string>;
  /**
   * The run id the client knows the run by, when it is not the native one (a resume that reused
   * the interrupted run's id, see routes.ts): `RUN_STARTED` and `RUN_FINISHED` carry it.
   */
  runId?: string;
}

/** Maps one run's internal events to AG-UI events, in order. */
export class AgUiEncoder {
  readonly #clientMessages: Set<string>;
  readonly #clientRunId: string | undefined;
  /** The last timestamp written: timestamps never go backwards within a stream. */
  #timestamp = 0;
  #threadId: string | null = null;
  #runId: string | null = null;
  #started = false;
  #ended = false;
  readonly #openMessages = new Set<string>();
  /** Reasoning messages started and not ended. */
  readonly #openReasoning = new Set<string>();
  readonly #openCalls = new Set<string>();
  readonly #openSteps: string[] = [];

  constructor(options: AgUiEncoderOptions = {}) {
    this.#clientMessages = new Set(options.clientMessageIds ?? []);
    this.#clientRunId = options.runId;
  }

  /** `RUN_STARTED`, the stream's first event. */
  #open(event: { session_id: string; run_id: string }, timestamp: number): AgUiEvent[] {
    this.#threadId = event.session_id;
    this.#runId = this.#clientRunId ?? event.run_id;
    this.#started = true;
    return [{
      type: EventType.RUN_STARTED,
      timestamp,
      threadId: event.session_id,
      runId: this.#runId,
      // The version this encoder speaks, so a newer client knows what it is reading.
      protocolVersion: PROTOCOL_VERSION,
    }];
  }

  /** True once a terminal event (`RUN_FINISHED` or `RUN_ERROR`) was produced. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The AG-UI events of one internal event (none, one, or closers followed by the event). */
  encode(event: RunEvent): AgUiEvent[] {
    if (this.#ended) return [];
    const timestamp = this.#stamp(millis(event.timestamp));
    switch (event.kind) {
      case "run_started":
        // A queued run's stream was opened by `run_queued` already.
        if (this.#started) return [];
        return this.#open(event, timestamp);
      case "run_queued":
        // The run waits for a free slot: the client sees it started, and why nothing comes yet.
        return [...this.#open(event, timestamp), {
          type: EventType.CUSTOM,
          timestamp,
          name: "run_queued",
          value: { queueDepth: event.queue_depth },
        }];
      case "run_resumed": {
        // The lost attempt's open message, calls and steps are abandoned (closed here); the
        // MESSAGES_SNAPSHOT that follows is the conversation at the checkpoint, without them.
        const opener = this.#started ? [] : this.#open(event, timestamp);
        return [...opener, ...this.#closeAll(timestamp), {
          type: EventType.CUSTOM,
          timestamp,
          name: "run_resumed",
          value: { attempt: event.attempt },
        }];
      }
      case "messages_snapshot":
        return this.#inRun([{
          type: EventType.MESSAGES_SNAPSHOT,
          timestamp,
          messages: event.messages.map(toAgUiMessage),
        }]);
      case "messages_added":
        // Messages another request sent to this run (steer); the client's own are in its list.
        return this.#inRun(
          event.messages.flatMap((m) =>
            this.#clientMessages.has(m.message_id) ? [] : textMessageEvents(m, timestamp)
          ),
        );
      case "step_started":
        this.#openSteps.push(event.step_name);
        return this.#inRun([{
          type: EventType.STEP_STARTED,
          timestamp,
          stepName: event.step_name,
        }]);
      case "step_finished": {
        const at = this.#openSteps.lastIndexOf(event.step_name);
        if (at < 0) return [];
        this.#openSteps.splice(at, 1);
        return this.#inRun([{
          type: EventType.STEP_FINISHED,
          timestamp,
          stepName: event.step_name,
        }]);
      }
      case "text_message_start":
        this.#openMessages.add(event.message_id);
        return this.#inRun([{
          type: EventType.TEXT_MESSAGE_START,
          timestamp,
          messageId: event.message_id,
          role: "assistant",
        }]);
      case "text_message_content":
        // Content outside an open message is a protocol error for the client: drop it.
        if (!this.#openMessages.has(event.message_id)) return [];
        return this.#inRun([{
          type: EventType.TEXT_MESSAGE_CONTENT,
          timestamp,
          messageId: event.message_id,
          delta: event.delta,
        }]);
      case "text_message_end":
        if (!this.#openMessages.delete(event.message_id)) return [];
        return this.#inRun([{
          type: EventType.TEXT_MESSAGE_END,
          timestamp,
          messageId: event.message_id,
        }]);
      case "reasoning_message_start":
      case "reasoning_message_content":
      case "reasoning_message_end":
        return this.#inRun(reasoningEvents(event, timestamp, this.#openReasoning));
      case "tool_call_start":
        this.#openCalls.add(event.tool_call_id);
        return this.#inRun([{
          type: EventType.TOOL_CALL_START,
          timestamp,
          toolCallId: event.tool_call_id,
          toolCallName: event.tool_name,
          parentMessageId: event.parent_message_id,
        }]);
      case "tool_call_args":
        if (!this.#openCalls.has(event.tool_call_id)) return [];
        return this.#inRun([{
          type: EventType.TOOL_CALL_ARGS,
          timestamp,
          toolCallId: event.tool_call_id,
          delta: event.delta,
        }]);
      case "tool_call_end":
        if (!this.#openCalls.delete(event.tool_call_id)) return [];
        return this.#inRun([{
          type: EventType.TOOL_CALL_END,
          timestamp,
          toolCallId: event.tool_call_id,
        }]);
      case "tool_call_result":
        if (this.#clientMessages.has(event.message_id)) return [];
        return this.#inRun([{
          type: EventType.TOOL_CALL_RESULT,
          timestamp,
          messageId: event.message_id,
          toolCallId: event.tool_call_id,
          content: contentText(event.content),
          role: "tool",
        }]);
      case "state_snapshot":
        return this.#inRun([{
          type: EventType.STATE_SNAPSHOT,
          timestamp,
          // The AG-UI state is the context; a session without one has the empty state.
          snapshot: event.context ?? {},
        }]);
      case "state_delta":
        return this.#inRun([{
          type: EventType.STATE_DELTA,
          timestamp,
          delta: event.delta as JsonPatchOperation[],
        }]);
      case "source":
        // AG-UI 1.0 has no event for sources: a CUSTOM event `source` carries one (docs/ag-ui.md).
        return this.#inRun([{
          type: EventType.CUSTOM,
          timestamp,
          name: "source",
          value: { messageId: event.message_id, ...camelSource(event) },
        }]);
      case "custom":
        return this.#inRun([{
          type: EventType.CUSTOM,
          timestamp,
          name: event.name,
          value: event.value === undefined ? null : event.value,
        }]);
      case "run_finished":
        return this.#finish(event, timestamp);
    }
  }

  /**
   * Ends a stream whose run events stopped without `run_finished` (a lost transport, a failure of
   * the encoder's caller): a `RUN_ERROR`, unless the stream already ended.
   */
  fail(message: string, code: string): AgUiEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    return [{ type: EventType.RUN_ERROR, timestamp: this.#stamp(Date.now()), message, code }];
  }

  /** `ms`, or the last timestamp written when that is later. */
  #stamp(ms: number): number {
    this.#timestamp = Math.max(this.#timestamp, ms);
    return this.#timestamp;
  }

  #inRun(events: AgUiEvent[]): AgUiEvent[] {
    // The client rejects any event before RUN_STARTED; the engine always starts with it.
    return this.#started ? events : [];
  }

  #finish(event: RunEventOf<"run_finished">, timestamp: number): AgUiEvent[] {
    this.#ended = true;
    if (event.status === "failed" || event.status === "running") {
      return [{
        type: EventType.RUN_ERROR,
        timestamp,
        message: event.error?.message ?? "the run failed",
        code: event.error?.code ?? "run_failed",
      }];
    }
    const threadId = this.#threadId ?? event.session_id;
    const runId = this.#runId ?? this.#clientRunId ?? event.run_id;
    const closers = this.#started ? this.#closeAll(timestamp) : [];
    const finished: RunFinishedEvent = {
      type: EventType.RUN_FINISHED,
      timestamp,
      threadId,
      runId,
      outcome: outcomeOf(event),
    };
    if (event.status === "completed" && event.result !== null && event.result !== undefined) {
      finished.result = event.result;
    }
    if (event.usage) finished.usage = [camelUsage(event.usage)];
    // Why the model stopped (`length`, `content_filter`, `refusal`, ...): AG-UI has no field of
    // its own for it, so it rides the event's metadata.
    // The run's cost at the model's price rides it too (absent without a price).
    if (event.finish_reason || typeof event.cost === "number") {
      finished.metadata = {
        ...(event.finish_reason ? { finishReason: event.finish_reason } : {}),
        ...(typeof event.cost === "number" ? { cost: event.cost } : {}),
      };
    }
    // A stream must open with RUN_STARTED even when the run never got to say it.
    const opener: AgUiEvent[] = this.#started ? [] : [{
      type: EventType.RUN_STARTED,
      timestamp,
      threadId,
      runId,
      protocolVersion: PROTOCOL_VERSION,
    }];
    return [...opener, ...closers, finished];
  }

  /** Closing events for everything still open, innermost first. */
  #closeAll(timestamp: number): AgUiEvent[] {
    const out: AgUiEvent[] = [];
    for (const messageId of this.#openReasoning) {
      out.push({ type: EventType.REASONING_MESSAGE_END, timestamp, messageId });
      out.push({ type: EventType.REASONING_END, timestamp, messageId });
    }
    this.#openReasoning.clear();
    for (const messageId of this.#openMessages) {
      out.push({ type: EventType.TEXT_MESSAGE_END, timestamp, messageId });
    }
    for (const toolCallId of this.#openCalls) {
      out.push({ type: EventType.TOOL_CALL_END, timestamp, toolCallId });
    }
    for (const stepName of this.#openSteps.reverse()) {
      out.push({ type: EventType.STEP_FINISHED, timestamp, stepName });
    }
    this.#openMessages.clear();
    this.#openCalls.clear();
    this.#openSteps.length = 0;
    return out;
  }
}

/** Internal timestamps are fractional epoch seconds; AG-UI's are integer milliseconds. */
function millis(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** One AG-UI SSE frame: `id:` when given, `event: <TYPE>`, the event as JSON, a blank line. */
export function agUiFrame(event: AgUiEvent, id?: string): string {
  return sseFrame(event, event.type, id);
}

/** Options of an AG-UI stream. */
export interface AgUiFramesOptions extends AgUiEncoderOptions {
  /**
   * The client's cursor: the items start at the run's first event, the frames up to the cursor
   * rebuild the encoder's state and the thread as the client holds it, and the stream resumes
   * with `RUN_STARTED`, that thread's `MESSAGES_SNAPSHOT` and `STATE_SNAPSHOT`, the messages,
   * tool calls and steps still open re-opened (these frames carry no id), then every frame
   * after the cursor.
   */
  cursor?: Cursor;
}

/**
 * The SSE frames of a run's event stream. Each frame's id is its event's sequence number (`N`,
 * then `N.1` … for more frames of one event). The stream always ends with exactly one terminal
 * event: a run that stops without `run_finished` ends with `RUN_ERROR`.
 */
export async function* agUiFrames(
  items: AsyncIterable<RunStreamItem>,
  options: AgUiFramesOptions = {},
): AsyncGenerator<string> {
  const encoder = new AgUiEncoder(options);
  const cursor = options.cursor;
  // What the client holds at its cursor, until the stream has caught up with it.
  let held: ThreadFold | null = cursor ? new ThreadFold() : null;
  const frames = function* (seq: number | null, events: AgUiEvent[]): Generator<string> {
    for (const [part, event] of events.entries()) {
      if (seq !== null && !isAfter(seq, part, cursor)) {
        held?.apply(event);
        continue;
      }
      if (held) {
        for (const opener of held.prelude()) yield agUiFrame(opener);
        held = null;
      }
      yield agUiFrame(event, seq === null ? undefined : frameId(seq, part));
    }
  };
  try {
    for await (const item of items) {
      if ("notice" in item) {
        yield* frames(null, encoder.fail(`the event stream ended: ${item.notice}`, item.notice));
        return;
      }
      yield* frames(item.seq, encoder.encode(item.event));
      if (encoder.ended) return;
      // Caught up with the cursor: the client gets the thread at once, not at the next event.
      if (held && item.seq !== null && cursor && item.seq >= cursor.seq) {
        for (const opener of held.prelude()) yield agUiFrame(opener);
        held = null;
      }
    }
    yield* frames(null, encoder.fail("the run's event stream ended early", "stream_ended"));
  } catch (err) {
    yield* frames(
      null,
      encoder.fail(`the run's event stream failed: ${String(err)}`, "stream_failed"),
    );
  }
}
