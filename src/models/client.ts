/**
 * The model client: opens a provider's response stream through the AI SDK (`doStream`), with the
 * establishment timeout and the retry policy of the resolved model, and maps the AI SDK stream
 * parts onto our `ModelEvent`s.
 *
 * Phases of one `open()`:
 * 1. Attempt (attempt.ts): our observed `fetch` goes into the provider, so we see connection
 *    errors, statuses and headers ourselves and know when the first byte of the body arrives.
 * 2. The timeout runs from the start of an attempt until that first byte; it is never armed again,
 *    so it cannot cut an established slow stream.
 * 3. The attempt is established at the first output part (text, tool call, finish). Failures
 *    before it (including error events a provider streams before any output) are establishment
 *    failures (failures.ts), retried here when transient; nothing has reached the engine yet, so a
 *    retry is safe.
 * 4. After that, failures surface from the `events` iterator (model_events.ts) and are never
 *    retried.
 */
import { apiKeyOf, attempt, type OpenContext } from "./attempt.ts";
import { modelEvents } from "./model_events.ts";
import { providerEntry } from "./registry.ts";
import { retryDelay } from "./retry.ts";
import { sentRequest } from "./sent_request.ts";
import { ModelError, type ModelMetrics } from "./types.ts";
import { secretScrubber } from "../secrets.ts";
import type { ModelClient, ModelStream } from "./types.ts";

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

/** The environment of the process, or nothing when env access is not granted. */
function processEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
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
        events: modelEvents(ctx, result, n),
        sent: (maxBytes) =>
          sentRequest(
            ctx.entry.http ? result.observed.request : undefined,
            result.callOptions,
            ctx.scrub,
            maxBytes,
          ),
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
      const error = new ModelError(
        result.code,
        ctx.scrub(`${resolved.provider}/${resolved.model}: ${result.message}${after}`),
        resolved.provider,
        resolved.model,
        n,
      );
      const sent = result.observed?.request;
      if (sent || (!ctx.entry.http && result.callOptions)) {
        error.sent = (maxBytes) =>
          sentRequest(ctx.entry.http ? sent : undefined, result.callOptions, ctx.scrub, maxBytes);
      }
      throw error;
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
