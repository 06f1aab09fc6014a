/**
 * The catalogue of agentd's metrics: every name, help text, label and bucket in one place
 * (docs/observability.md lists the same). `createMetrics()` makes a fresh set per app instance.
 */
import {
  type Counter,
  FAST_SECONDS_BUCKETS,
  type Gauge,
  type Histogram,
  MetricsRegistry,
  SECONDS_BUCKETS,
} from "./registry.ts";

/** Terminal run statuses, each exported from the start (at 0). */
export const TERMINAL_STATUSES = ["completed", "failed", "interrupted", "cancelled"] as const;

/** Kinds of open SSE streams. */
export const STREAM_KINDS = ["attached", "reattach", "ag_ui", "a2a", "ai_sdk", "other"] as const;

/** Why a replica resumed a run: its replica was lost, or handed it over at shutdown. */
export const RESUME_REASONS = ["lost", "handoff"] as const;

/** Why a connection ended before its request reached the app. */
export const CLIENT_ERROR_REASONS = ["timeout", "headers_too_large", "malformed", "reset"] as const;

/** Buckets of a queued run's wait (seconds): from a slot freeing at once to an hour's backlog. */
const QUEUE_WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/** A kind of open SSE stream. */
export type StreamKind = typeof STREAM_KINDS[number];

/** agentd's instruments, on one registry. */
export interface AgentdMetrics {
  /** The registry `GET /metrics` renders. */
  readonly registry: MetricsRegistry;
  /** `agentd_http_requests_total`: requests by method, route pattern and status. */
  httpRequests: Counter<"method" | "route" | "status">;
  /** `agentd_http_request_duration_seconds`: time to the response head. */
  httpDuration: Histogram<"method" | "route">;
  /** `agentd_streams_open`: SSE streams open now, by kind. */
  streamsOpen: Gauge<"kind">;
  /** `agentd_http_connections_open`: connections open now. */
  connectionsOpen: Gauge;
  /** `agentd_http_connections_refused_total`: connections refused at the cap. */
  connectionsRefused: Counter;
  /** `agentd_http_client_errors_total`: requests refused before any route, by reason. */
  clientErrors: Counter<"reason">;
  /** `agentd_runs_started_total`: runs started. */
  runsStarted: Counter;
  /** `agentd_runs_resumed_total`: lost or handed-over runs this replica resumed, by reason. */
  runsResumed: Counter<"reason">;
  /** `agentd_runs_total`: runs finished, by status. */
  runs: Counter<"status">;
  /** `agentd_runs_active`: runs this process executes now. */
  runsActive: Gauge;
  /** `agentd_runs_queued_total`: runs this replica queued (at max_concurrent). */
  runsQueued: Counter;
  /** `agentd_run_queue_depth`: queued runs over all replicas and tenants, last looked at. */
  runQueueDepth: Gauge;
  /** `agentd_run_queue_wait_seconds`: how long each queued run this replica took waited. */
  runQueueWait: Histogram;
  /** `agentd_model_attempts_total`: model stream attempts, by outcome. */
  modelAttempts: Counter<"provider" | "model" | "outcome">;
  /** `agentd_model_attempt_duration_seconds`: time to establish a model stream. */
  modelAttemptDuration: Histogram<"provider" | "model" | "outcome">;
  /** `agentd_model_time_to_first_token_seconds`: time to the first output. */
  modelFirstToken: Histogram<"provider" | "model">;
  /** `agentd_model_tokens_total`: tokens the providers reported, by kind. */
  modelTokens: Counter<"provider" | "model" | "kind">;
  /** `agentd_tenant_tokens_total`: tokens of finished runs, by tenant (guarded) and kind. */
  tenantTokens: Counter<"tenant" | "kind">;
  /** The `tenant` label of a tenant: its id for the first `max_tenants`, `_other` after. */
  tenantLabel(tenant: string): string;
  /** `agentd_tool_calls_total`: tool calls, by outcome. */
  toolCalls: Counter<"tool" | "outcome">;
  /** `agentd_tool_duration_seconds`: tool call durations. */
  toolDuration: Histogram<"tool">;
  /** `agentd_pubsub_publish_seconds`: publish durations, by transport. */
  publishDuration: Histogram<"transport">;
  /** `agentd_pubsub_errors_total`: absorbed pub/sub failures, by code. */
  pubsubErrors: Counter<"code">;
  /** `agentd_store_query_seconds`: store call durations, by method. */
  storeDuration: Histogram<"method">;
  /** `agentd_store_errors_total`: store calls that rejected, by method. */
  storeErrors: Counter<"method">;
}

/** The `tenant` label of the tenants past the guard's limit. */
export const OTHER_TENANTS = "_other";

/** Options of `createMetrics`. */
export interface MetricsOptions {
  /** Tenants with a label of their own (`runtime.metrics.max_tenants`; 100 by default). */
  maxTenants?: number;
}

/** Creates agentd's metrics on a new registry (one per app instance). */
export function createMetrics(options: MetricsOptions = {}): AgentdMetrics {
  const r = new MetricsRegistry();
  // The cardinality guard: the first tenants seen keep their label for the process's life.
  const maxTenants = options.maxTenants ?? 100;
  const labelled = new Set<string>();
  const m: AgentdMetrics = {
    registry: r,
    httpRequests: r.counter({
      name: "agentd_http_requests_total",
      help: "HTTP requests answered, by method, route pattern and status code.",
      labelNames: ["method", "route", "status"],
    }),
    httpDuration: r.histogram({
      name: "agentd_http_request_duration_seconds",
      help: "Time from request to response headers (SSE streams: until the stream opens).",
      labelNames: ["method", "route"],
      buckets: SECONDS_BUCKETS,
    }),
    streamsOpen: r.gauge({
      name: "agentd_streams_open",
      help: "SSE streams open now, by kind (attached, reattach, ag_ui, a2a, ai_sdk).",
      labelNames: ["kind"],
    }),
    connectionsOpen: r.gauge({
      name: "agentd_http_connections_open",
      help: "HTTP connections open now (at most http_server.max_connections).",
    }),
    connectionsRefused: r.counter({
      name: "agentd_http_connections_refused_total",
      help: "Connections answered 503 and closed because max_connections were open.",
    }),
    clientErrors: r.counter({
      name: "agentd_http_client_errors_total",
      help: "Connections closed before a request reached the app, by reason (timeout: header or " +
        "request timeout; headers_too_large; malformed; reset: the client went away).",
      labelNames: ["reason"],
    }),
    runsStarted: r.counter({
      name: "agentd_runs_started_total",
      help: "Runs this replica started.",
    }),
    runsResumed: r.counter({
      name: "agentd_runs_resumed_total",
      help: "Runs this replica took over as a new attempt, by reason (lost: their replica " +
        "stopped heartbeating for a lease, a crash or a kill; handoff: it handed them over at " +
        "shutdown).",
      labelNames: ["reason"],
    }),
    runs: r.counter({
      name: "agentd_runs_total",
      help: "Runs that reached a terminal status, by status (counted where the outcome is " +
        "persisted: by the owner, or by the sweeper for lost replicas).",
      labelNames: ["status"],
    }),
    runsActive: r.gauge({
      name: "agentd_runs_active",
      help: "Runs this replica executes now.",
    }),
    runsQueued: r.counter({
      name: "agentd_runs_queued_total",
      help: "Runs this replica queued (it executed runtime.runs.max_concurrent runs).",
    }),
    runQueueDepth: r.gauge({
      name: "agentd_run_queue_depth",
      help: "Queued runs in the store, over all replicas and tenants (as of this replica's last " +
        "look: every poll_interval).",
    }),
    runQueueWait: r.histogram({
      name: "agentd_run_queue_wait_seconds",
      help: "How long each queued run this replica took had waited since it was submitted.",
      buckets: QUEUE_WAIT_BUCKETS,
    }),
    modelAttempts: r.counter({
      name: "agentd_model_attempts_total",
      help: "Attempts to establish a model response stream, by outcome (ok, retried, failed).",
      labelNames: ["provider", "model", "outcome"],
    }),
    modelAttemptDuration: r.histogram({
      name: "agentd_model_attempt_duration_seconds",
      help: "Duration of one attempt to establish a model response stream.",
      labelNames: ["provider", "model", "outcome"],
      buckets: SECONDS_BUCKETS,
    }),
    modelFirstToken: r.histogram({
      name: "agentd_model_time_to_first_token_seconds",
      help: "Time from opening a model stream (retries included) to its first text or tool call.",
      labelNames: ["provider", "model"],
      buckets: SECONDS_BUCKETS,
    }),
    modelTokens: r.counter({
      name: "agentd_model_tokens_total",
      help: "Tokens the model providers reported, by provider, model and kind (input, output, " +
        "reasoning, cached_input; reasoning is part of output, cached_input part of input).",
      labelNames: ["provider", "model", "kind"],
    }),
    tenantTokens: r.counter({
      name: "agentd_tenant_tokens_total",
      help: "Tokens of the runs that finished, by tenant and kind (input, output, reasoning, " +
        `cached_input); tenants past runtime.metrics.max_tenants are under tenant="${OTHER_TENANTS}".`,
      labelNames: ["tenant", "kind"],
    }),
    tenantLabel(tenant) {
      if (labelled.has(tenant)) return tenant;
      if (labelled.size >= maxTenants) return OTHER_TENANTS;
      labelled.add(tenant);
      return tenant;
    },
    toolCalls: r.counter({
      name: "agentd_tool_calls_total",
      help: "Server-side tool calls, by tool and outcome (ok, error).",
      labelNames: ["tool", "outcome"],
    }),
    toolDuration: r.histogram({
      name: "agentd_tool_duration_seconds",
      help: "Duration of server-side tool calls.",
      labelNames: ["tool"],
      buckets: SECONDS_BUCKETS,
    }),
    publishDuration: r.histogram({
      name: "agentd_pubsub_publish_seconds",
      help: "Time from a publish call to its completion (the transport accepted the event).",
      labelNames: ["transport"],
      buckets: FAST_SECONDS_BUCKETS,
    }),
    pubsubErrors: r.counter({
      name: "agentd_pubsub_errors_total",
      help: "Failures the pub/sub transport absorbed (dropped publishes, lost connections).",
      labelNames: ["code"],
    }),
    storeDuration: r.histogram({
      name: "agentd_store_query_seconds",
      help: "Duration of store calls, by Store method.",
      labelNames: ["method"],
      buckets: FAST_SECONDS_BUCKETS,
    }),
    storeErrors: r.counter({
      name: "agentd_store_errors_total",
      help: "Store calls that rejected (including expected conflicts such as 409s), by method.",
      labelNames: ["method"],
    }),
  };
  for (const status of TERMINAL_STATUSES) m.runs.touch({ status });
  for (const kind of STREAM_KINDS) m.streamsOpen.set({ kind }, 0);
  for (const reason of CLIENT_ERROR_REASONS) m.clientErrors.touch({ reason });
  for (const reason of RESUME_REASONS) m.runsResumed.touch({ reason });
  return m;
}
