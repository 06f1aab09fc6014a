/**
 * The stream of one model step turned into run events and an answer: text and reasoning go into
 * the `Answer`, tool calls are started, streamed and ended, and the finish (reasons, usage) and the
 * provider's warnings are kept for the run record.
 */
import { makeEvent, type RunEvent } from "../api/events.ts";
import type { ToolCall } from "../api/schemas.ts";
import type { ModelEvent, ModelUsage } from "../models/mod.ts";
import type { Answer } from "./answer.ts";
import { abortableIter } from "./async.ts";
import type { OpenEvents } from "./open_events.ts";

/** How the model ended a step. */
export interface StepFinish {
  /** The unified reason (`stop`, `length`, `content-filter`, `tool-calls`, `other`). */
  reason: string;
  /** The provider's own reason, when it gave one. */
  raw_reason?: string;
  usage: ModelUsage;
  /** A refusal's explanation, when the provider gave one. */
  explanation?: string;
}

/** A call the provider ran itself, with its result when the provider gave one. */
export interface ProviderCall {
  call: ToolCall;
  result?: { value: unknown; is_error: boolean };
}

/** What a model step's stream produced besides its events. */
export interface StreamedStep {
  /** The calls whose arguments completed. */
  calls: ToolCall[];
  /** Calls the stream started and never completed (arguments cut off), in start order. */
  incomplete: { id: string; name: string }[];
  /** Calls the provider ran itself. */
  provider: ProviderCall[];
  /** The finish (null when the stream gave none). */
  finish: StepFinish | null;
  /** The provider's warnings about the request. */
  warnings: string[];
}

/** What the step streams into. */
export interface StepSink {
  open: OpenEvents;
  answer: Answer;
  /** The assistant message's id. */
  message_id: string;
  signal: AbortSignal;
}

/** Streams one model response as run events; returns its calls, finish and warnings. */
export async function* streamStep(
  events: AsyncIterable<ModelEvent>,
  sink: StepSink,
): AsyncGenerator<RunEvent, StreamedStep> {
  const { open, answer, message_id } = sink;
  const out: StreamedStep = { calls: [], incomplete: [], provider: [], finish: null, warnings: [] };
  const names = new Map<string, string>();
  /** Started calls, and whether their arguments were streamed as deltas. */
  const started = new Map<string, { streamed: boolean }>();
  const startCall = (id: string, name: string): RunEvent => {
    started.set(id, { streamed: false });
    names.set(id, name);
    return open.callStarted(id, name, message_id);
  };

  for await (const ev of abortableIter(events, sink.signal)) {
    switch (ev.type) {
      case "text-delta":
        if (!ev.delta) break;
        answer.addText(ev.delta);
        yield* open.text(message_id, ev.delta);
        break;
      case "reasoning-start":
        yield* open.textEnd();
        answer.startReasoning(ev.id);
        break;
      case "reasoning-delta":
        answer.addReasoning(ev.id, ev.delta);
        break;
      case "reasoning-end":
        answer.endReasoning(ev.id, ev.provider_metadata);
        break;
      case "tool-call-start":
        yield* open.textEnd();
        if (!started.has(ev.id)) yield startCall(ev.id, ev.name);
        break;
      case "tool-call-delta": {
        // Without a start the name is unknown; the arguments then go out whole with `tool-call`.
        const s = started.get(ev.id);
        if (!s || !ev.delta) break;
        s.streamed = true;
        yield makeEvent("tool_call_args", { tool_call_id: ev.id, delta: ev.delta });
        break;
      }
      case "tool-call": {
        yield* open.textEnd();
        if (!started.has(ev.id)) yield startCall(ev.id, ev.name);
        if (!started.get(ev.id)!.streamed) {
          const delta = JSON.stringify(ev.arguments);
          yield makeEvent("tool_call_args", { tool_call_id: ev.id, delta });
        }
        yield open.callEnded(ev.id);
        out.calls.push({
          id: ev.id,
          name: ev.name,
          arguments: ev.arguments,
          ...(ev.provider_metadata ? { provider_metadata: ev.provider_metadata } : {}),
        });
        break;
      }
      case "provider-tool-call": {
        yield* open.textEnd();
        yield open.callStarted(ev.id, ev.name, message_id, true);
        const args = typeof ev.arguments === "object" && ev.arguments !== null &&
            !Array.isArray(ev.arguments)
          ? ev.arguments as Record<string, unknown>
          : { input: ev.arguments ?? null };
        yield makeEvent("tool_call_args", { tool_call_id: ev.id, delta: JSON.stringify(args) });
        yield open.callEnded(ev.id);
        out.provider.push({
          call: {
            id: ev.id,
            name: ev.name,
            arguments: args,
            provider_executed: true,
            ...(ev.provider_metadata ? { provider_metadata: ev.provider_metadata } : {}),
          },
        });
        break;
      }
      case "provider-tool-result": {
        const entry = out.provider.find((p) => p.call.id === ev.id);
        if (entry) entry.result = { value: ev.result, is_error: ev.is_error };
        break;
      }
      case "warnings":
        out.warnings.push(...ev.warnings);
        break;
      case "finish":
        // A refusal's explanation is the answer, in the stream as in the store.
        if (ev.explanation && answer.text === "") {
          answer.addText(ev.explanation);
          yield* open.text(message_id, ev.explanation);
        }
        out.finish = {
          reason: ev.reason,
          ...(ev.raw_reason ? { raw_reason: ev.raw_reason } : {}),
          usage: ev.usage ?? {},
          ...(ev.explanation ? { explanation: ev.explanation } : {}),
        };
        break;
    }
  }
  for (const id of open.openCalls()) out.incomplete.push({ id, name: names.get(id) ?? "" });
  return out;
}
