/**
 * The events of an established model stream: the AI SDK's stream parts mapped onto our
 * `ModelEvent`s (text deltas; tool calls as start, argument deltas and the whole call; the finish
 * with its usage). A failure here is mid-stream: a `ModelError`, never retried.
 */
import type { Established, OpenContext } from "./attempt.ts";
import { errorMessage, isRecord } from "./failures.ts";
import { ModelError, type ModelEvent } from "./types.ts";

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
        case "tool-input-start":
          token();
          started.add(part.id);
          yield { type: "tool-call-start", id: part.id, name: part.toolName };
          break;
        case "tool-input-delta":
          if (part.delta !== "") yield { type: "tool-call-delta", id: part.id, delta: part.delta };
          break;
        case "tool-call": {
          if (part.providerExecuted) break;
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
          yield { type: "tool-call", id: part.toolCallId, name: part.toolName, arguments: args };
          break;
        }
        case "finish": {
          if (part.finishReason.unified === "interrupted") {
            throw fail("the provider stream ended before the response was complete");
          }
          finished = true;
          const usage: { input_tokens?: number; output_tokens?: number } = {};
          if (part.usage.inputTokens.total !== undefined) {
            usage.input_tokens = part.usage.inputTokens.total;
          }
          if (part.usage.outputTokens.total !== undefined) {
            usage.output_tokens = part.usage.outputTokens.total;
          }
          yield { type: "finish", reason: part.finishReason.unified, usage };
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
