/**
 * One attempt to establish a model's response stream: the provider's AI SDK model streams through
 * the observed fetch; the establishment timeout runs from the start of the attempt until the first
 * body byte (it is never armed again, so it cannot cut an established slow stream); the attempt is
 * established at the first output part. A failure before that — an error part the provider
 * streams before any output included — is classified (failures.ts) for the retry loop.
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { classify, EarlyStreamError, type Failure } from "./failures.ts";
import { type BodyReader, type Observed, observedFetch } from "./observed_fetch.ts";
import type { PartReader } from "./sse_parts.ts";
import { toCallOptions } from "./prompt.ts";
import type { ProviderEntry } from "./registry.ts";
import type { Scrub } from "../secrets.ts";
import type { ModelMetrics, ModelRequest, ResolvedModel } from "./types.ts";

/** One part of an AI SDK model's stream. */
export type Part = LanguageModelV4StreamPart;

/** Everything one `open()` needs. */
export interface OpenContext {
  entry: ProviderEntry;
  resolved: ResolvedModel;
  request: ModelRequest;
  signal: AbortSignal;
  env: Record<string, string>;
  fetch: typeof fetch;
  metrics?: ModelMetrics;
  startedAt: number;
  /** Replaces secret values in error messages (the configured ones and the key sent). */
  scrub: Scrub;
}

/** An established attempt, handed to the events iterator. */
export interface Established {
  reader: PartReader;
  /** The parts read while establishing, the first output part last. */
  buffered: Part[];
  controller: AbortController;
  /** Detaches the attempt from the run's signal. */
  release: () => void;
  /** What the fetch saw (the request sent included). */
  observed: Observed;
  /** The AI SDK call the provider's model received. */
  callOptions: unknown;
}

/** A failed attempt, with what it sent when it got as far as sending (the step record). */
export type FailedAttempt = Failure & { observed?: Observed; callOptions?: unknown };

/** Parts that mean the model has started answering. */
const OUTPUT_PARTS = new Set<Part["type"]>([
  "text-delta",
  "tool-input-start",
  "tool-input-delta",
  "tool-call",
  "reasoning-start",
  "reasoning-delta",
  "finish",
  "file",
  "source",
]);

/** The API key a request to the provider sends: the resolved model's, else its variable's. */
export function apiKeyOf(
  entry: ProviderEntry,
  resolved: ResolvedModel,
  env: Record<string, string>,
): string {
  return resolved.api_key || (entry.env.apiKey && env[entry.env.apiKey]) || "";
}

/** One attempt: resolves established, resolves a failure, or rejects when the run aborts. */
export async function attempt(ctx: OpenContext): Promise<Established | FailedAttempt> {
  const { entry, resolved, signal } = ctx;
  const baseURL = resolved.base_url || (entry.env.baseUrl && ctx.env[entry.env.baseUrl]) ||
    entry.defaultBaseUrl;
  const apiKey = apiKeyOf(entry, resolved, ctx.env);
  if (entry.http && !baseURL) {
    return {
      code: "model_error",
      message: `provider '${entry.name}' has no endpoint: set base_url in the model block` +
        (entry.env.baseUrl ? ` or ${entry.env.baseUrl}` : ""),
      transient: false,
    };
  }
  const controller = new AbortController();
  let interrupt!: (reason: unknown) => void;
  const interrupted = new Promise<never>((_, reject) => interrupt = reject);
  interrupted.catch(() => {});
  const onAbort = () => {
    controller.abort(signal.reason);
    interrupt(signal.reason);
  };
  signal.addEventListener("abort", onAbort, { once: true });
  const release = () => signal.removeEventListener("abort", onAbort);

  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const observed: Observed = { firstByte: false, onFirstByte: () => clearTimeout(timer) };

  let reader: PartReader | undefined;
  /** The successful body our own parser reads (the entry's `parts`), taken from the AI SDK. */
  let detached: BodyReader | undefined;
  let callOptions: ReturnType<typeof toCallOptions> | undefined;
  let pending: ReturnType<LanguageModelV4["doStream"]> | undefined;
  try {
    const parts = await entry.parts?.();
    const model = await entry.create({
      modelId: resolved.model,
      apiKey,
      baseURL,
      fetch: observedFetch(
        ctx.fetch,
        controller.signal,
        observed,
        parts ? (body) => detached = body : undefined,
      ),
    });
    // The timeout starts once the model is built: a provider's first model in the process loads
    // its package, which is no part of the model's establishment time.
    if (resolved.timeout !== undefined && entry.http) {
      timer = setTimeout(() => {
        timedOut = true;
        interrupt(new DOMException("model stream establishment timed out", "TimeoutError"));
        controller.abort(new DOMException("model stream establishment timed out", "TimeoutError"));
      }, resolved.timeout);
    }
    callOptions = toCallOptions(ctx.request, resolved.inference_params, entry, controller.signal);
    pending = model.doStream(callOptions);
    const { stream, response } = await Promise.race([pending, interrupted]);
    reader = stream.getReader();
    if (parts && detached) {
      // The SDK got an empty body: its few parts (`stream-start` with the request's warnings, a
      // finish) tell the wire's reader what the request was; the real body's parts come from it.
      const sdk: Part[] = [];
      for (;;) {
        const next = await Promise.race([reader.read(), interrupted]);
        if (next.done) break;
        sdk.push(next.value);
      }
      reader = parts(detached, sdk, {
        url: observed.request?.url ?? "",
        statusCode: observed.status ?? 200,
        responseHeaders: response?.headers ?? {},
      });
    }
    const buffered: Part[] = [];
    for (;;) {
      const next = await Promise.race([reader.read(), interrupted]);
      if (next.done) break;
      if (next.value.type === "error") throw new EarlyStreamError(next.value.error);
      buffered.push(next.value);
      if (OUTPUT_PARTS.has(next.value.type)) break;
    }
    clearTimeout(timer);
    return { reader, buffered, controller, release, observed, callOptions };
  } catch (e) {
    clearTimeout(timer);
    release();
    // Stop whatever is still in flight: the request, the body, a doStream that resolves late.
    controller.abort();
    if (reader) reader.cancel().catch(() => {});
    else {
      Promise.resolve(pending).then((r) => r?.stream.cancel().catch(() => {}), () => {});
    }
    if (signal.aborted) throw signal.reason;
    return { ...classify(e, observed, timedOut, resolved.timeout), observed, callOptions };
  }
}
