/**
 * Custom OpenTelemetry spans through `@opentelemetry/api`, as Deno's guidance has it: with
 * `OTEL_DENO=true` Deno registers its tracer provider and context manager with the API, so our
 * spans (`agentd.run`, `agentd.model.open`, `agentd.tool.call`, `agentd.store.*`) join the trace
 * of the HTTP request Deno already records and are exported over OTLP. Without it the API is not
 * loaded (src/otel.ts): spans are non-recording ones and there is no context, so every helper here
 * just runs its function. See docs/observability.md.
 */
import type { Span } from "@opentelemetry/api";
import { otel, SPAN_STATUS_ERROR } from "../otel.ts";

/** The part of an OpenTelemetry span the wrappers use. */
export type SpanLike = Pick<Span, "setAttribute" | "setStatus" | "end">;

/** Span attributes; undefined values are left out. */
export type Attributes = Record<string, string | number | boolean | undefined>;

/** A started span that can make itself the active one. */
export interface OpenSpan extends SpanLike {
  /** False for the no-op spans handed out while OpenTelemetry is off. */
  readonly recording: boolean;
  /** Runs `fn` with this span active: spans started within (also by Deno's fetch) are children. */
  run<T>(fn: () => T): T;
  /** Marks the span failed with the error's message. */
  fail(err: unknown): void;
}

/** Starts our spans (non-recording ones when OpenTelemetry is off). */
export interface Tracer {
  /** Starts a span (not yet active: use `run`); the caller ends it. */
  begin(name: string, attributes: Attributes): OpenSpan;
  /**
   * Runs `fn` inside a new span, the active one for spans started within; ends it when `fn`
   * settles (error status when it throws).
   */
  inSpan<T>(name: string, attributes: Attributes, fn: (span: SpanLike) => Promise<T>): Promise<T>;
  /**
   * Wraps an async generator so that its body runs inside one span, from the first `next()` until
   * it finishes; `onItem` sees every yielded value (to set attributes or the status).
   */
  traceGenerator<T>(
    name: string,
    attributes: Attributes,
    source: AsyncGenerator<T>,
    onItem?: (span: SpanLike, item: T) => void,
  ): AsyncGenerator<T>;
}

function clean(attributes: Attributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Iterates `source` with every `next()` running inside `span`, and ends the span when the source
 * finishes, throws, or the consumer stops early (which also returns the source).
 */
export async function* iterateInSpan<T>(
  span: OpenSpan,
  source: AsyncIterable<T>,
  onItem?: (span: SpanLike, item: T) => void,
): AsyncGenerator<T> {
  if (!span.recording) {
    // Nothing to record: no per-item context switch, just the source (every token passes here).
    try {
      return yield* source;
    } finally {
      span.end();
    }
  }
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await span.run(() => iterator.next());
      if (next.done) return;
      onItem?.(span, next.value);
      yield next.value;
    }
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    await span.run(async () => await iterator.return?.()).catch(() => {});
    span.end();
  }
}

/**
 * Runs `fn` with `span` (a span someone else started, such as Deno's span of an incoming request)
 * as the active one, so the spans started within are its children; plainly without one.
 */
export function withActiveSpan<T>(span: Span | undefined, fn: () => T): T {
  return span && otel
    ? otel.context.with(otel.trace.setSpan(otel.context.active(), span), fn)
    : fn();
}

/** Whether a tracer provider (Deno's, with `OTEL_DENO=true`) is registered with the API. */
function providerRegistered(): boolean {
  if (!otel) return false;
  const provider = otel.trace.getTracerProvider();
  return !(provider instanceof otel.ProxyTracerProvider) ||
    provider.getDelegateTracer("agentd") !== undefined;
}

/**
 * The span of every `begin` while OpenTelemetry is off: what the API's non-recording span does
 * (its setters return the span; nothing here chains them).
 */
const NO_SPAN: OpenSpan = {
  recording: false,
  setAttribute: () => NO_SPAN as unknown as Span,
  setStatus: () => NO_SPAN as unknown as Span,
  end: () => {},
  run: (fn) => fn(),
  fail: () => {},
};

/** A tracer named `agentd` from the global OpenTelemetry API (Deno's provider when it is on). */
export function createTracer(version = "0"): Tracer {
  const begin = otel ? apiBegin(otel, version) : () => NO_SPAN;

  return {
    begin,
    async inSpan(name, attributes, fn) {
      const span = begin(name, attributes);
      try {
        return await span.run(() => fn(span));
      } catch (err) {
        span.fail(err);
        throw err;
      } finally {
        span.end();
      }
    },
    traceGenerator(name, attributes, source, onItem) {
      // No provider registered (OpenTelemetry off): there is no span to run the items in.
      if (!providerRegistered()) return source;
      // The span starts with the first `next()`, when the source's body starts running.
      return (async function* () {
        yield* iterateInSpan(begin(name, attributes), source, onItem);
      })();
    },
  };
}

/** `begin` on the API's tracer named `agentd`. */
function apiBegin(
  api: NonNullable<typeof otel>,
  version: string,
): (name: string, attributes: Attributes) => OpenSpan {
  const { context, trace } = api;
  const tracer = trace.getTracer("agentd", version);
  return (name, attributes) => {
    const span = tracer.startSpan(name, { attributes: clean(attributes) });
    const active = trace.setSpan(context.active(), span);
    return {
      recording: span.isRecording(),
      setAttribute: (key, value) => span.setAttribute(key, value),
      setStatus: (status) => span.setStatus(status),
      end: () => span.end(),
      run: (fn) => context.with(active, fn),
      fail: (err) =>
        span.setStatus({
          code: SPAN_STATUS_ERROR,
          message: String((err as Error)?.message ?? err),
        }),
    };
  };
}
