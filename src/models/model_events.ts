/**
 * The events of an established model stream: the AI SDK's stream parts mapped onto our
 * `ModelEvent`s (text deltas; reasoning blocks with the provider metadata the next request must
 * send back; tool calls as start, argument deltas and the whole call; calls the provider runs
 * itself and their results; warnings; the finish with its reasons and usage). A failure here is
 * mid-stream: a `ModelError`, never retried. docs/models.md lists what is carried and what is
 * dropped.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { Established, OpenContext } from "./attempt.ts";
import { errorMessage, isRecord } from "./failures.ts";
import {
  keptMetadata,
  mergeMetadata,
  refusalExplanation,
  usageOf,
  warningText,
} from "./stream_parts.ts";
import { ModelError, type ModelEvent, type ModelSource, type ProviderMetadata } from "./types.ts";

type SourcePart = Extract<LanguageModelV4StreamPart, { type: "source" }>;

/** A source stream part (or a citation's source) in our fields; absent fields stay absent. */
function sourceOf(part: SourcePart, citedText?: string): ModelSource {
  const out: ModelSource = part.sourceType === "url"
    ? { source_id: part.id, source_type: "url", url: part.url }
    : {
      source_id: part.id,
      source_type: "document",
      media_type: part.mediaType,
      ...(part.filename ? { filename: part.filename } : {}),
    };
  if (part.title) out.title = part.title;
  if (citedText) out.cited_text = citedText;
  return out;
}

/** Maps the established stream to our events; failures here are mid-stream and not retried. */
export async function* modelEvents(
  ctx: OpenContext,
  established: Established,
  attempts: number,
): AsyncGenerator<ModelEvent> {
  const { reader, buffered, controller } = established;
  const { resolved, signal, metrics } = ctx;
  // Cancelling the reader settles the read in flight at once (done), even when the source ignores
  // the abort; the loop then throws the signal's reason. Racing every read against an abort
  // promise instead would cost a promise per part, or pile a reaction per part onto one.
  const abortListener = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", abortListener, { once: true });
  const fail = (message: string) =>
    new ModelError(
      "model_stream",
      ctx.scrub(`${resolved.provider}/${resolved.model}: ${message}`),
      resolved.provider,
      resolved.model,
      attempts,
    );
  const started = new Set<string>();
  /** Calls the provider runs itself: their input is not streamed as ours. */
  const providerRun = new Set<string>();
  /** Reasoning blocks open, with the metadata gathered so far. */
  const reasoning = new Map<string, ProviderMetadata | undefined>();
  function* endReasoning(id: string): Generator<ModelEvent> {
    if (!reasoning.has(id)) return;
    const provider_metadata = keptMetadata(reasoning.get(id));
    reasoning.delete(id);
    yield { type: "reasoning-end", id, ...(provider_metadata ? { provider_metadata } : {}) };
  }
  let firstToken = false;
  let finished = false;
  let done = false;
  const token = () => {
    if (firstToken) return;
    firstToken = true;
    metrics?.onFirstToken?.({
      provider: resolved.provider,
      model: resolved.model,
      ms: Math.round(performance.now() - ctx.startedAt),
    });
  };
  try {
    for (;;) {
      // An abort while the consumer held the previous part found no read in flight to reject.
      if (signal.aborted) throw signal.reason;
      let part = buffered.shift();
      if (part === undefined) {
        const next = await reader.read();
        if (signal.aborted) throw signal.reason;
        if (next.done) {
          done = true;
          break;
        }
        part = next.value;
      }
      switch (part.type) {
        case "text-delta":
          if (part.delta === "") break;
          token();
          yield { type: "text-delta", delta: part.delta };
          break;
        case "reasoning-start":
          token();
          yield* endReasoning(part.id);
          reasoning.set(part.id, part.providerMetadata as ProviderMetadata | undefined);
          yield { type: "reasoning-start", id: part.id };
          break;
        case "reasoning-delta":
          if (!reasoning.has(part.id)) {
            reasoning.set(part.id, undefined);
            yield { type: "reasoning-start", id: part.id };
          }
          reasoning.set(
            part.id,
            mergeMetadata(reasoning.get(part.id), part.providerMetadata as ProviderMetadata),
          );
          if (part.delta !== "") yield { type: "reasoning-delta", id: part.id, delta: part.delta };
          break;
        case "reasoning-end":
          if (!reasoning.has(part.id)) break;
          reasoning.set(
            part.id,
            mergeMetadata(reasoning.get(part.id), part.providerMetadata as ProviderMetadata),
          );
          yield* endReasoning(part.id);
          break;
        case "source":
          yield { type: "source", source: sourceOf(part) };
          break;
        case "text-end":
          // Citations of the text block just ended (Anthropic), each with the passage it cites.
          for (const citation of part.citations ?? []) {
            yield {
              type: "source",
              source: sourceOf(citation.source, citation.citedText),
            };
          }
          break;
        case "stream-start":
          if (part.warnings.length > 0) {
            yield { type: "warnings", warnings: part.warnings.map(warningText) };
          }
          break;
        case "tool-input-start":
          token();
          if (part.providerExecuted) {
            providerRun.add(part.id);
            break;
          }
          started.add(part.id);
          yield { type: "tool-call-start", id: part.id, name: part.toolName };
          break;
        case "tool-input-delta":
          if (providerRun.has(part.id)) break;
          if (part.delta !== "") yield { type: "tool-call-delta", id: part.id, delta: part.delta };
          break;
        case "tool-call": {
          const provider_metadata = keptMetadata(part.providerMetadata as ProviderMetadata);
          const meta = provider_metadata ? { provider_metadata } : {};
          if (part.providerExecuted) {
            token();
            let input: unknown = part.input;
            try {
              input = JSON.parse(part.input);
            } catch { /* kept as the text the provider sent */ }
            yield {
              type: "provider-tool-call",
              id: part.toolCallId,
              name: part.toolName,
              arguments: input,
              ...meta,
            };
            break;
          }
          const input = part.input.trim() === "" ? "{}" : part.input;
          // Providers that deliver a call in one piece still get the start/delta/call sequence.
          if (!started.has(part.toolCallId)) {
            token();
            yield { type: "tool-call-start", id: part.toolCallId, name: part.toolName };
            yield { type: "tool-call-delta", id: part.toolCallId, delta: input };
          }
          let args: unknown;
          try {
            args = JSON.parse(input);
          } catch {
            throw fail(`tool call ${part.toolName} has arguments that are not JSON: ${input}`);
          }
          if (!isRecord(args) || Array.isArray(args)) {
            throw fail(`tool call ${part.toolName} has arguments that are not a JSON object`);
          }
          yield {
            type: "tool-call",
            id: part.toolCallId,
            name: part.toolName,
            arguments: args,
            ...meta,
          };
          break;
        }
        case "tool-result": {
          if (part.preliminary) break;
          const provider_metadata = keptMetadata(part.providerMetadata as ProviderMetadata);
          yield {
            type: "provider-tool-result",
            id: part.toolCallId,
            name: part.toolName,
            result: part.result,
            is_error: part.isError === true,
            ...(provider_metadata ? { provider_metadata } : {}),
          };
          break;
        }
        case "finish": {
          if (part.finishReason.unified === "interrupted") {
            throw fail("the provider stream ended before the response was complete");
          }
          for (const id of [...reasoning.keys()]) yield* endReasoning(id);
          finished = true;
          const explanation = refusalExplanation(part.providerMetadata as ProviderMetadata);
          const usage = usageOf(part.usage);
          metrics?.onUsage?.({ provider: resolved.provider, model: resolved.model, usage });
          yield {
            type: "finish",
            reason: part.finishReason.unified,
            ...(part.finishReason.raw ? { raw_reason: part.finishReason.raw } : {}),
            usage,
            ...(explanation ? { explanation } : {}),
          };
          break;
        }
        case "error":
          throw fail(`stream failed: ${errorMessage(part.error)}`);
      }
    }
    if (!finished) throw fail("the provider stream ended without a finish");
  } catch (e) {
    if (signal.aborted) throw signal.reason;
    if (e instanceof ModelError) throw e;
    throw fail(`stream failed: ${errorMessage(e)}`);
  } finally {
    signal.removeEventListener("abort", abortListener);
    established.release();
    if (!done) {
      // The consumer stopped early or the stream failed: drop the connection.
      controller.abort();
      reader.cancel().catch(() => {});
    }
  }
}
