/**
 * Observability: agentd's Prometheus metrics (a registry of our own, one per app instance), the
 * wrappers that measure the services at their seams, the HTTP middleware and `/metrics` handler,
 * and custom OpenTelemetry spans through `@opentelemetry/api` (exported by Deno's built-in OTel).
 * See docs/observability.md.
 */
export {
  Counter,
  FAST_SECONDS_BUCKETS,
  Gauge,
  Histogram,
  type HistogramOptions,
  type HistogramState,
  type Labels,
  Metric,
  type MetricOptions,
  MetricsRegistry,
  PROMETHEUS_CONTENT_TYPE,
  type Renderable,
  SECONDS_BUCKETS,
} from "./registry.ts";
export {
  type AgentdMetrics,
  CLIENT_ERROR_REASONS,
  createMetrics,
  type MetricsOptions,
  OTHER_TENANTS,
  STREAM_KINDS,
  type StreamKind,
  TERMINAL_STATUSES,
} from "./agentd.ts";
export {
  instrumentPubSub,
  instrumentStore,
  instrumentTools,
  modelMetrics,
  traceEngine,
  traceModelClient,
} from "./instrument.ts";
export {
  type BodyCloseWatch,
  httpMetrics,
  metricsHandler,
  streamKind,
  type StreamPaths,
} from "./http.ts";
export {
  type Attributes,
  createTracer,
  iterateInSpan,
  type OpenSpan,
  type SpanLike,
  type Tracer,
  withActiveSpan,
} from "./tracing.ts";
