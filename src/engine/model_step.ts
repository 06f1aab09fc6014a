/**
 * The stream of one model step turned into run events and an answer: text and reasoning go into
 * the `Answer`, tool calls are started, streamed and ended, and the finish (reasons, usage) and the
 * provider's warnings are kept for the run record.
 */
import { makeEvent, type RunEvent } from "../api/events.ts";
import type { ToolCall } from "../api/schemas.ts";
import type { ModelEvent, ModelUsage, ProviderMetadata } from "../models/mod.ts";
import type { Answer } from "./answer.ts";
import { assistantMessage, toolMessage, toolResultValue } from "./conversation.ts";
import type { StepWriter } from "./step_writer.ts";
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
  /** Whether reasoning is streamed (it is kept in the answer either way). */
  showReasoning: boolean;
}

/** The encrypted value of a reasoning block that has nothing else (Anthropic's redacted data). */
function encryptedValue(meta: ProviderMetadata | undefined): string | undefined {
  for (const fields of Object.values(meta ?? {})) {
    for (const [key, value] of Object.entries(fields)) {
      if (/redacted|encrypted/i.test(key) && typeof value === "string") return value;
    }
  }
  return undefined;
}

/** Streams one model response as run events; returns its calls, finish and warnings. */
export async function* streamStep(
  events: AsyncIterable<ModelEvent>,
  sink: StepSink,
): AsyncGenerator<RunEvent, StreamedStep> {
  const { open, answer, message_id } = sink;
  const out: StreamedStep = { calls: [], incomplete: [], provider: [], finish: null, warnings: [] };
  const names = new Map<string, string>();
  const show = sink.showReasoning;
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
        yield* open.reasoningEnd();
        answer.addText(ev.delta);
        yield* open.text(message_id, ev.delta);
        break;
      case "reasoning-start": {
        yield* open.textEnd();
        answer.startReasoning(ev.id);
        if (show) yield* open.reasoningStart(crypto.randomUUID(), message_id);
        break;
      }
      case "reasoning-delta":
        answer.addReasoning(ev.id, ev.delta);
        if (show) yield* open.reasoningContent(ev.delta);
        break;
      case "reasoning-end": {
        answer.endReasoning(ev.id, ev.provider_metadata);
        const encrypted = answer.reasoningText(ev.id) === ""
          ? encryptedValue(ev.provider_metadata)
          : undefined;
        if (show) yield* open.reasoningEnd(encrypted);
        break;
      }
      case "tool-call-start":
        yield* open.reasoningEnd();
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
        yield* open.reasoningEnd();
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
        yield* open.reasoningEnd();
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
      case "source":
        answer.addSource(ev.source);
        yield makeEvent("source", { message_id, ...ev.source });
        break;
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

/**
 * Stores the step's assistant message and answers what the stream left open: every call the
 * client saw is stored with a result — an incomplete one with an error, a provider-run one with
 * the provider's result. Only complete calls of ours go on to the tools step.
 */
export function* storeAnswer(
  writes: Pick<StepWriter, "add">,
  message_id: string,
  answer: Answer,
  step: StreamedStep,
): Generator<RunEvent> {
  const incomplete = step.incomplete.map(({ id, name }) => ({ id, name, arguments: {} }));
  const stored = [...step.calls, ...incomplete, ...step.provider.map((p) => p.call)];
  if (!answer.empty || stored.length > 0) {
    writes.add([assistantMessage(message_id, answer.parts(), stored)]);
  }
  const why = step.finish?.reason === "length"
    ? "the output limit was reached"
    : "the model stream ended before the call was complete";
  const answers = [
    ...incomplete.map((call) => ({
      id: call.id,
      value: toolResultValue(`arguments incomplete: ${why}`, true),
      is_error: true,
      provider: false,
    })),
    ...step.provider.map(({ call, result }) => ({
      id: call.id,
      value: result
        ? toolResultValue(result.value, result.is_error)
        : toolResultValue("the provider returned no result for this call", true),
      is_error: !result || result.is_error,
      provider: true,
    })),
  ];
  for (const a of answers) {
    const [saved] = writes.add([toolMessage(a.id, a.value)]);
    yield makeEvent("tool_call_result", {
      tool_call_id: a.id,
      message_id: saved.message_id,
      content: a.value,
      is_error: a.is_error,
      ...(a.provider ? { provider_executed: true as const } : {}),
    });
  }
}
