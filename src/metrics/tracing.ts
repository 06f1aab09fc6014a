/**
 * Custom OpenTelemetry spans through Deno's built-in integration (`Deno.telemetry`), without the
 * `@opentelemetry/api` package: Deno exposes an OpenTelemetry-compatible tracer provider and
 * context manager. With `OTEL_DENO=true` our spans (`agentd.run`, `agentd.model.open`,
 * `agentd.tool.call`) join the trace of the HTTP request Deno already records and are exported
 * over OTLP; without it Deno refuses to start spans ("otel not initialized") and every helper
 * here runs its function plainly. See docs/observability.md.
 */

/** The part of an OpenTelemetry span we use. */
export interface SpanLike {
  setAttribute(key: string, value: string | number | boolean): void;
  /** `code`: 0 unset, 1 ok, 2 error (OpenTelemetry's SpanStatusCode). */
  setStatus(status: { code: 0 | 1 | 2; message?: string }): void;
  end(): void;
}

/** OpenTelemetry span status codes. */
export const SpanStatus = { Unset: 0, Ok: 1, Error: 2 } as const;

/** Span attributes. */
export type Attributes = Record<string, string | number | boolean | undefined>;

/** A started span that can make itself the active one. */
export interface OpenSpan extends SpanLike {
  /** Runs `fn` with this span active: spans started within (also by Deno's fetch) are children. */
  run<T>(fn: () => T): T;
  /** Marks the span failed with the error's message. */
  fail(err: unknown): void;
}

/** Starts our spans; a no-op when OpenTelemetry is off. */
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

/** Deno's OpenTelemetry context manager (typed `any` by Deno; the part we call). */
interface ContextManager {
  active(): { getValue(key: symbol): unknown };
  with<T>(context: unknown, fn: () => T): T;
}

// The key under which OpenTelemetry (and Deno's implementation of it) keeps the active span.
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

const noopSpan: OpenSpan = {
  setAttribute() {},
  setStatus() {},
  end() {},
  run: (fn) => fn(),
  fail() {},
};

function telemetry(): { tracerProvider: unknown; contextManager: ContextManager } | undefined {
  // Absent on runtimes without Deno's OpenTelemetry integration.
  return "telemetry" in Deno ? Deno.telemetry : undefined;
}

function clean(attributes: Attributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}

/** The trace and span id of the active span, for log correlation; undefined without one. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  try {
    const span = telemetry()?.contextManager.active().getValue(SPAN_KEY) as
      | { spanContext?: () => { traceId: string; spanId: string } }
      | undefined;
    const ctx = span?.spanContext?.();
    return ctx && ctx.traceId ? { trace_id: ctx.traceId, span_id: ctx.spanId } : undefined;
  } catch {
    return undefined;
  }
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

/** A tracer named `agentd` on Deno's tracer provider; spans are off until Deno's OTel is on. */
export function createTracer(version = "0"): Tracer {
  const otel = telemetry();
  // deno-lint-ignore no-explicit-any
  const tracer: any = (otel?.tracerProvider as any)?.getTracer?.("agentd", version);
  let disabled = !tracer;

  const begin = (name: string, attributes: Attributes): OpenSpan => {
    if (disabled) return noopSpan;
    let started: { span: SpanLike; context: unknown };
    try {
      // startActiveSpan hands back the context in which the new span is the active one.
      started = tracer.startActiveSpan(
        name,
        { attributes: clean(attributes) },
        (span: SpanLike) => ({ span, context: otel!.contextManager.active() }),
      );
    } catch {
      // "otel not initialized": OTEL_DENO is not set. Decided once for the process.
      disabled = true;
      return noopSpan;
    }
    const { span, context } = started;
    return {
      setAttribute: (key, value) => span.setAttribute(key, value),
      setStatus: (status) => span.setStatus(status),
      end: () => span.end(),
      run: (fn) => otel!.contextManager.with(context, fn),
      fail: (err) =>
        span.setStatus({
          code: SpanStatus.Error,
          message: String((err as Error)?.message ?? err),
        }),
    };
  };

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
      // The span starts with the first `next()`, when the source's body starts running.
      return (async function* () {
        yield* iterateInSpan(begin(name, attributes), source, onItem);
      })();
    },
  };
}
