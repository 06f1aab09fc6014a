/**
 * The A2A stream encoder: a pure mapper from internal run events to A2A `StreamResponse` objects
 * (each frame holds exactly one of `task`, `statusUpdate`, `artifactUpdate`):
 *
 * - `run_queued` (an attached run waits for a free slot) → statusUpdate SUBMITTED with
 *   `metadata.queueDepth`; `run_started` → statusUpdate WORKING; `run_resumed` (a new attempt
 *   after a lost replica) → statusUpdate WORKING again, the lost attempt's held-back text
 *   dropped; `messages_added` (messages that joined the working task, steer) → statusUpdate
 *   WORKING with each message;
 * - each assistant text message → artifactUpdate chunks of the artifact whose id is the message id
 *   (`append` false on its first chunk, `lastChunk` true on its last; the encoder holds one delta
 *   back so the last chunk carries text rather than being an empty marker);
 * - `state_snapshot` / `state_delta` → tracked, and the `state` artifact at the end when the run
 *   leaves a context;
 * - `run_finished` → the final statusUpdate (completed, failed, canceled, input-required).
 *
 * Tool calls, steps, snapshots and emits have no A2A counterpart (execution is opaque) and are
 * dropped. The route sends the initial `task` frame (`submittedTask`) before the first event.
 * `a2aFrames` is the add-on's counterpart of the native `nativeFrames` and AG-UI's `agUiFrames`.
 */
import jsonpatch from "fast-json-patch";
import type { RunEvent, RunStreamItem, SourceFields } from "../../api/events.ts";
import { type Cursor, frameId, isAfter, parseCursor } from "../../http/kit/mod.ts";
import { ALL_OUTPUT_MODES, type OutputModes } from "./request.ts";
import type { Artifact, StreamResponse, Task } from "./responses.ts";
import {
  historyMessage,
  reasoningArtifact,
  sourcesArtifact,
  stateArtifact,
  taskMetadata,
  taskStatus,
  textArtifact,
} from "./task.ts";

/** Which task the events belong to and what the client accepts. */
export interface A2aEncoderOptions {
  taskId: string;
  contextId: string;
  modes?: OutputModes;
}

/** ISO 8601 of an event's epoch-seconds timestamp. */
export function isoOf(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

/** The first frame of a `message:stream`: the task in state SUBMITTED. */
export function submittedTask(
  taskId: string,
  contextId: string,
  timestamp: string,
): { task: Task } {
  return {
    task: { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED", timestamp } },
  };
}

/** The encoder of one task's events; `encode` is called with each event in order. */
export class A2aEncoder {
  readonly #taskId: string;
  readonly #contextId: string;
  readonly #modes: OutputModes;
  #context: Record<string, unknown> | null = null;
  /** The delta held back per open message (at most one message is open at a time). */
  #held: { messageId: string; text: string } | null = null;
  /** Messages whose artifact has had its first chunk (a reopened message appends). */
  readonly #started = new Set<string>();
  /** Reasoning blocks streaming: their assistant message and text so far. */
  readonly #reasoning = new Map<string, { messageId: string; text: string }>();
  /** Sources by assistant message, sent whole as each message's `sources` artifact at the end. */
  readonly #sources = new Map<string, SourceFields[]>();
  #finished = false;

  constructor(options: A2aEncoderOptions) {
    this.#taskId = options.taskId;
    this.#contextId = options.contextId;
    this.#modes = options.modes ?? ALL_OUTPUT_MODES;
  }

  /** True once `run_finished` was encoded. */
  get finished(): boolean {
    return this.#finished;
  }

  /** The frames of one event (often none). */
  encode(event: RunEvent): StreamResponse[] {
    switch (event.kind) {
      case "run_started":
        return [this.#status({
          state: "TASK_STATE_WORKING",
          timestamp: isoOf(event.timestamp),
        })];
      case "run_queued":
        // The task waits for a free slot: still SUBMITTED, with the queue's depth.
        return [{
          statusUpdate: {
            taskId: this.#taskId,
            contextId: this.#contextId,
            status: { state: "TASK_STATE_SUBMITTED", timestamp: isoOf(event.timestamp) },
            metadata: { queueDepth: event.queue_depth },
          },
        }];
      case "run_resumed":
        // What the lost attempt streamed after its checkpoint is abandoned: a held-back delta of
        // it never goes out; the new attempt's answer is a new artifact (a new message id).
        this.#held = null;
        return [this.#status({
          state: "TASK_STATE_WORKING",
          timestamp: isoOf(event.timestamp),
        })];
      case "messages_added": {
        // Messages another request sent to the working task (steer): a WORKING status update
        // carrying each, as history shows them.
        const timestamp = isoOf(event.timestamp);
        return event.messages.flatMap((m) => {
          const message = historyMessage(m, this.#taskId);
          return message ? [this.#status({ state: "TASK_STATE_WORKING", message, timestamp })] : [];
        });
      }
      case "text_message_content": {
        if (!this.#modes.text || event.delta === "") return [];
        const out = this.#held && this.#held.messageId !== event.message_id
          ? this.#flush(true)
          : [];
        if (this.#held) {
          out.push(this.#chunk(this.#held.messageId, this.#held.text, false));
        }
        this.#held = { messageId: event.message_id, text: event.delta };
        return out;
      }
      case "text_message_end":
        return this.#flush(true);
      case "reasoning_message_start":
        if (this.#modes.json) {
          this.#reasoning.set(event.message_id, { messageId: event.parent_message_id, text: "" });
        }
        return [];
      case "reasoning_message_content": {
        const block = this.#reasoning.get(event.message_id);
        if (block) block.text += event.delta;
        return [];
      }
      case "reasoning_message_end": {
        // Whole, once the block ends; an encrypted block has no text to show.
        const block = this.#reasoning.get(event.message_id);
        this.#reasoning.delete(event.message_id);
        if (!block || block.text === "") return [];
        return [this.#artifact(reasoningArtifact(event.message_id, block.messageId, block.text))];
      }
      case "source": {
        if (!this.#modes.json) return [];
        const { kind: _k, timestamp: _t, message_id, ...fields } = event;
        const list = this.#sources.get(message_id) ?? [];
        list.push(fields);
        this.#sources.set(message_id, list);
        return [];
      }
      case "state_snapshot":
        this.#context = event.context === null ? null : structuredClone(event.context);
        return [];
      case "state_delta":
        this.#applyDelta(event.delta);
        return [];
      case "run_finished": {
        const out = this.#flush(true);
        this.#finished = true;
        // Each message's sources as one artifact, as a read of the task shows them.
        for (const [messageId, sources] of this.#sources) {
          out.push(this.#artifact(sourcesArtifact(messageId, sources)));
        }
        const result = event.result as { context?: unknown } | null;
        const context = event.status === "completed" && result && "context" in result
          ? (result.context as Record<string, unknown> | null)
          : this.#context;
        if (this.#modes.json && context) out.push(this.#artifact(stateArtifact(context)));
        const final = this.#status(taskStatus(event, isoOf(event.timestamp), this.#taskId));
        const metadata = taskMetadata(event);
        if (metadata && "statusUpdate" in final) final.statusUpdate.metadata = metadata;
        out.push(final);
        return out;
      }
      default:
        return [];
    }
  }

  /** A whole artifact in one update. */
  #artifact(artifact: Artifact): StreamResponse {
    return {
      artifactUpdate: {
        taskId: this.#taskId,
        contextId: this.#contextId,
        artifact,
        append: false,
        lastChunk: true,
      },
    };
  }

  #status(status: ReturnType<typeof taskStatus>): StreamResponse {
    return { statusUpdate: { taskId: this.#taskId, contextId: this.#contextId, status } };
  }

  #chunk(messageId: string, text: string, last: boolean): StreamResponse {
    const append = this.#started.has(messageId);
    this.#started.add(messageId);
    return {
      artifactUpdate: {
        taskId: this.#taskId,
        contextId: this.#contextId,
        artifact: textArtifact(messageId, text),
        append,
        lastChunk: last,
      },
    };
  }

  /** Sends the held delta; `last` marks it as its artifact's final chunk. */
  #flush(last: boolean): StreamResponse[] {
    const held = this.#held;
    if (!held) return [];
    this.#held = null;
    return [this.#chunk(held.messageId, held.text, last)];
  }

  #applyDelta(delta: Parameters<typeof jsonpatch.applyPatch>[1]): void {
    try {
      this.#context = jsonpatch.applyPatch(
        structuredClone(this.#context ?? {}),
        delta,
        false,
        false,
      )
        .newDocument as Record<string, unknown>;
    } catch {
      // The engine only sends deltas that applied to its context; one that does not apply here
      // means the encoder missed a snapshot (a subscriber attached mid-run): the final result or
      // the next snapshot is the truth then, so keep what is known.
    }
  }
}

/** One frame of an A2A stream: the update and its SSE id (the stream cursor, when it has one). */
export interface A2aFrame {
  id?: string;
  update: StreamResponse;
}

/** A point in a task's stream: the turn (its run; the task's own run when absent) and a cursor. */
export interface TaskCursor extends Cursor {
  run?: string;
}

/**
 * The SSE id of frame `part` of event `seq` of run `runId` in task `taskId`'s stream: the run's own
 * cursor (`N`, `N.1` …, the same as every protocol's) for the task's first run, and prefixed with
 * the turn's run id (`<run_id>/N`) for the runs that continue it, as each run numbers its events.
 */
export function taskFrameId(taskId: string, runId: string, seq: number, part: number): string {
  return runId === taskId ? frameId(seq, part) : `${runId}/${frameId(seq, part)}`;
}

/** Parses a task stream cursor, `N[.k]` or `<run_id>/N[.k]`; null when it is not one. */
export function parseTaskCursor(text: string): TaskCursor | null {
  const at = text.lastIndexOf("/");
  const cursor = parseCursor(at < 0 ? text : text.slice(at + 1));
  if (!cursor || at === 0) return null;
  return at < 0 ? cursor : { ...cursor, run: text.slice(0, at) };
}

/** Options of one run's A2A frames. */
export interface A2aFramesOptions extends A2aEncoderOptions {
  /** The run the events are of, when it is a later turn of the task (see `taskFrameId`). */
  runId?: string;
  /**
   * The client's cursor: the items start at the run's first event, and the frames up to the
   * cursor only rebuild the encoder's state (the text it holds back, the context).
   */
  cursor?: Cursor;
}

/**
 * The A2A frames of a run's event stream; ends after `run_finished` (or when the events end). Each
 * frame's id is `taskFrameId` of the event that produced it; frames at or before the cursor are
 * not written again. Unlike `nativeFrames` and `agUiFrames` it yields the updates, not SSE text:
 * each binding writes them its own way (bare on HTTP+JSON, in a JSON-RPC response on JSON-RPC).
 */
export async function* a2aFrames(
  items: AsyncIterable<RunStreamItem>,
  options: A2aFramesOptions,
): AsyncGenerator<A2aFrame> {
  const encoder = new A2aEncoder(options);
  const runId = options.runId ?? options.taskId;
  for await (const item of items) {
    if ("notice" in item) return;
    for (const [part, update] of encoder.encode(item.event).entries()) {
      if (item.seq === null) yield { update };
      else if (isAfter(item.seq, part, options.cursor)) {
        yield { id: taskFrameId(options.taskId, runId, item.seq, part), update };
      }
    }
    if (encoder.finished) return;
  }
}
