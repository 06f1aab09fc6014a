/**
 * The model client: opens a provider's response stream through the AI SDK (`doStream`), with the
 * establishment timeout and the retry policy of the resolved model, and maps the AI SDK stream
 * parts onto our `ModelEvent`s.
 *
 * Phases of one `open()`:
 * 1. Attempt: our instrumented `fetch` goes into the provider, so we see connection errors,
 *    statuses and headers ourselves and know when the first byte of the body arrives.
 * 2. The timeout runs from the start of an attempt until that first byte; it is never armed again,
 *    so it cannot cut an established slow stream.
 * 3. The attempt is established at the first output part (text, tool call, finish). Failures
 *    before it (including error events a provider streams before any output) are establishment
 *    failures, retried when transient; nothing has reached the engine yet, so a retry is safe.
 * 4. After that, failures surface from the `events` iterator and are never retried.
 */
import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { toCallOptions } from "./prompt.ts";
import { providerEntry } from "./registry.ts";
import type { ProviderEntry } from "./registry.ts";
import { isTransientStatus, parseRetryAfter, retryDelay, statusCode } from "./retry.ts";
import { ModelError } from "./types.ts";
import { type Scrub, secretScrubber } from "../secrets.ts";
import type { ModelClient, ModelEvent, ModelRequest, ModelStream, ResolvedModel } from "./types.ts";

/** One attempt as reported to `ModelMetrics.onAttempt`. */
export interface ModelAttemptInfo {
  /** The provider of the attempt. */
  provider: string;
  /** The model of the attempt. */
  model: string;
  /** 1 for the first request. */
  attempt: number;
  /** Milliseconds the attempt took (until established or failed). */
  ms: number;
  /** Whether the attempt established the stream. */
  ok: boolean;
  /** Error code of a failed attempt. */
  code?: string;
  /** HTTP status the provider answered with, when it answered. */
  status?: number;
  /** Whether a failed attempt will be retried. */
  retrying?: boolean;
  /** Milliseconds until the retry, when there is one. */
  delay_ms?: number;
}

/** Optional observation hooks (logs, metrics); they must not throw. */
export interface ModelMetrics {
  /** Called after every attempt, established or failed. */
  onAttempt?(info: ModelAttemptInfo): void;
  /** Called once per stream at the first text delta or tool call, with ms since `open()`. */
  onFirstToken?(info: { provider: string; model: string; ms: number }): void;
}

/** Options of `createModelClient`. */
export interface ModelClientOptions {
  /** Where provider credentials and endpoints come from when the resolved model has none. */
  env?: Record<string, string>;
  /** The fetch providers use (tests, proxies); the global fetch by default. */
  fetch?: typeof fetch;
  /** Where attempts are counted and timed (none when omitted). */
  metrics?: ModelMetrics;
  /**
   * Secret values no error message may carry (the configuration's, see `secretValues`). The key
   * a request sends is always scrubbed, listed or not: providers echo it in error bodies.
   */
  secrets?: readonly string[];
}

type Part = LanguageModelV4StreamPart;

/** What our fetch wrapper saw during one attempt. */
interface Observed {
  status?: number;
  headers?: Headers;
  connectionError?: unknown;
  bodyError?: unknown;
  firstByte: boolean;
  onFirstByte: () => void;
}

/** An error part the provider streamed before any output. */
class EarlyStreamError extends Error {
  constructor(readonly error: unknown) {
    super(errorMessage(error));
  }
}

/** A classified attempt failure. */
interface Failure {
  code: string;
  message: string;
  transient: boolean;
  status?: number;
  retryAfterMs?: number;
}

/** An established attempt, handed to the events iterator. */
interface Established {
  reader: ReadableStreamDefaultReader<Part>;
  buffered: Part[];
  controller: AbortController;
  /** Detaches the attempt from the run's signal. */
  release: () => void;
}

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

/** Anthropic error event types that a retry can cure. */
const TRANSIENT_ERROR_TYPES = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The provider's message from an error body (`{error:{message}}`, `{message}`, `{error}`). */
function bodyMessage(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const candidates = Array.isArray(parsed) ? parsed : [parsed];
    for (const c of candidates) {
      if (!isRecord(c)) continue;
      if (isRecord(c.error) && typeof c.error.message === "string") return c.error.message;
      if (typeof c.message === "string") return c.message;
      if (typeof c.error === "string") return c.error;
    }
  } catch {
    const text = body.trim();
    if (text) return text.length > 300 ? `${text.slice(0, 300)}...` : text;
  }
  return undefined;
}

/** The most informative message of an error: the provider's own words when there are some. */
function errorMessage(error: unknown): string {
  if (APICallError.isInstance(error)) {
    return (error.responseBody ? bodyMessage(error.responseBody) : undefined) ?? error.message;
  }
  if (error instanceof Error) return error.message;
  if (isRecord(error)) {
    if (typeof error.message === "string") return error.message;
    if (isRecord(error.error) && typeof error.error.message === "string") {
      return error.error.message;
    }
  }
  return typeof error === "string" ? error : JSON.stringify(error);
}

/** Whether an error event streamed before any output is worth a retry. */
function isTransientStreamError(error: unknown): boolean {
  if (!isRecord(error)) return false;
  if (typeof error.isRetryable === "boolean") return error.isRetryable;
  if (typeof error.statusCode === "number") return isTransientStatus(error.statusCode);
  const type = error.type ?? (isRecord(error.error) ? error.error.type : undefined);
  return typeof type === "string" && TRANSIENT_ERROR_TYPES.has(type);
}

/** Classifies an attempt failure into our error code and whether it is transient. */
function classify(
  error: unknown,
  observed: Observed,
  timedOut: boolean,
  timeout?: number,
): Failure {
  if (timedOut) {
    return {
      code: "model_timeout",
      message: `no response stream within ${timeout} ms`,
      transient: true,
    };
  }
  if (error instanceof EarlyStreamError) {
    return {
      code: "model_stream",
      message: `error event before any output: ${error.message}`,
      transient: isTransientStreamError(error.error),
    };
  }
  const status = observed.status !== undefined && observed.status >= 400
    ? observed.status
    : undefined;
  if (status !== undefined) {
    return {
      code: statusCode(status),
      message: `HTTP ${status}: ${errorMessage(error)}`,
      transient: isTransientStatus(status),
      status,
      retryAfterMs: parseRetryAfter(observed.headers),
    };
  }
  if (observed.connectionError !== undefined || observed.bodyError !== undefined) {
    return {
      code: "model_connection",
      message: `connection failed: ${errorMessage(observed.connectionError ?? observed.bodyError)}`,
      transient: true,
    };
  }
  if (APICallError.isInstance(error) && observed.status !== undefined) {
    // An OpenAI-style error frame in a 200 stream before any output.
    return {
      code: "model_stream",
      message: `error event before any output: ${errorMessage(error)}`,
      // The provider decides here: OpenAI marks e.g. insufficient_quota as final.
      transient: error.isRetryable,
    };
  }
  return { code: "model_error", message: errorMessage(error), transient: false };
}

/** Wraps fetch: pins the attempt's signal and reports status, headers and the first body byte. */
function instrumentedFetch(
  base: typeof fetch,
  signal: AbortSignal,
  observed: Observed,
): typeof fetch {
  return async (input, init) => {
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (e) {
      if (!signal.aborted) observed.connectionError = e;
      throw e;
    }
    observed.status = response.status;
    observed.headers = response.headers;
    if (!response.ok || response.body === null) return response;
    const source = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await source.read();
        } catch (e) {
          if (!signal.aborted) observed.bodyError ??= e;
          controller.error(e);
          return;
        }
        if (!observed.firstByte) {
          observed.firstByte = true;
          observed.onFirstByte();
        }
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Waits `ms`, rejecting with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The API key a request to the provider sends: the resolved model's, else its variable's. */
function apiKeyOf(entry: ProviderEntry, resolved: ResolvedModel, env: Record<string, string>) {
  return resolved.api_key || (entry.env.apiKey && env[entry.env.apiKey]) || "";
}

/** The environment of the process, or nothing when env access is not granted. */
function processEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}

/** Everything one `open()` needs. */
interface OpenContext {
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

/** One attempt: resolves established, resolves a failure, or rejects when the run aborts. */
async function attempt(ctx: OpenContext): Promise<Established | Failure> {
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
  if (resolved.timeout !== undefined && entry.http) {
    timer = setTimeout(() => {
      timedOut = true;
      interrupt(new DOMException("model stream establishment timed out", "TimeoutError"));
      controller.abort(new DOMException("model stream establishment timed out", "TimeoutError"));
    }, resolved.timeout);
  }

  let reader: ReadableStreamDefaultReader<Part> | undefined;
  let pending: PromiseLike<{ stream: ReadableStream<Part> }> | undefined;
  try {
    const model = entry.create({
      modelId: resolved.model,
      apiKey,
      baseURL,
      fetch: instrumentedFetch(ctx.fetch, controller.signal, observed),
    });
    const options = toCallOptions(ctx.request, resolved.inference_params, entry, controller.signal);
    pending = model.doStream(options);
    const { stream } = await Promise.race([pending, interrupted]);
    reader = stream.getReader();
    const buffered: Part[] = [];
    for (;;) {
      const next = await Promise.race([reader.read(), interrupted]);
      if (next.done) break;
      if (next.value.type === "error") throw new EarlyStreamError(next.value.error);
      buffered.push(next.value);
      if (OUTPUT_PARTS.has(next.value.type)) break;
    }
    clearTimeout(timer);
    return { reader, buffered, controller, release };
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
    return classify(e, observed, timedOut, resolved.timeout);
  }
}

/** Maps the established stream to our events; failures here are mid-stream and not retried. */
async function* events(
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

/** Opens one model stream with retries (see the module comment). */
async function open(ctx: OpenContext): Promise<ModelStream> {
  const { resolved, signal, metrics } = ctx;
  const maxAttempts = Math.max(1, resolved.retry.max_attempts);
  for (let n = 1;; n++) {
    if (signal.aborted) throw signal.reason;
    const attemptStart = performance.now();
    const result = await attempt(ctx);
    const ms = Math.round(performance.now() - attemptStart);
    const info = { provider: resolved.provider, model: resolved.model, attempt: n, ms };
    if ("reader" in result) {
      metrics?.onAttempt?.({ ...info, ok: true });
      return {
        attempts: n,
        establish_ms: Math.round(performance.now() - ctx.startedAt),
        events: events(ctx, result, n),
      };
    }
    const retrying = result.transient && n < maxAttempts;
    const delay = retrying ? retryDelay(resolved.retry, n, result.retryAfterMs) : undefined;
    metrics?.onAttempt?.({
      ...info,
      ok: false,
      code: result.code,
      status: result.status,
      retrying,
      delay_ms: delay,
    });
    if (delay === undefined) {
      const after = n > 1 ? ` (after ${n} attempts)` : "";
      throw new ModelError(
        result.code,
        ctx.scrub(`${resolved.provider}/${resolved.model}: ${result.message}${after}`),
        resolved.provider,
        resolved.model,
        n,
      );
    }
    await sleep(delay, signal);
  }
}

/**
 * Creates the model client the engine uses. `open()` rejects with a `ModelError` on failure and
 * with the signal's reason when the signal aborts.
 */
export function createModelClient(options: ModelClientOptions = {}): ModelClient {
  const env = options.env ?? processEnv();
  // Looked up per call, so a test that replaces globalThis.fetch is honoured.
  const baseFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  return {
    open(resolved, request, signal) {
      const entry = providerEntry(resolved.provider);
      if (!entry) {
        return Promise.reject(
          new ModelError(
            "model_error",
            `unknown provider '${resolved.provider}'`,
            resolved.provider,
            resolved.model,
            0,
          ),
        );
      }
      return open({
        entry,
        resolved,
        request,
        signal,
        env,
        fetch: baseFetch,
        metrics: options.metrics,
        startedAt: performance.now(),
        scrub: secretScrubber([...options.secrets ?? [], apiKeyOf(entry, resolved, env)]),
      });
    },
  };
}
