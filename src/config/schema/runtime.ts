/** The `runtime` block: storage, pub/sub, replicas, attached streams, tool slots, logging. */
import { z } from "zod";

/** Where runs, sessions, messages and checkpoints are stored. */
export const StorageSchema = z.object({
  kind: z.enum(["sqlite", "postgres"]).optional(),
  /** SQLite file path (relative to the manifest) or `:memory:`. */
  path: z.string().optional(),
  /** PostgreSQL URL (`postgres://...`); selects the postgres store. */
  url: z.string().optional(),
  /** PostgreSQL schema to use (created when missing). */
  schema: z.string().regex(/^[a-z_][a-z0-9_]*$/).optional(),
  /**
   * Milliseconds any store call may take (connecting, waiting for a lock, the query); past it
   * the call fails as unavailable (503 with `Retry-After` to clients) instead of waiting on.
   */
  timeout: z.number().int().positive().max(600_000).default(5_000),
}).strict();

/** Live event transport for re-attach streams (spec: AGENT__PUBSUB__*). */
export const PubSubSchema = z.object({
  kind: z.enum(["memory", "redis"]).default("memory"),
  capacity: z.number().int().min(1).max(10_000_000).default(4096),
  url: z.string().optional(),
  token: z.string().optional(),
  /** Prefix of every channel name, so several deployments can share one Redis. */
  prefix: z.string().default("agentd"),
  /**
   * Milliseconds a run's events are kept for replay after the run ends (in memory for `memory`,
   * in a Redis Stream per run for `redis`); 0 keeps none, so no stream can be resumed.
   */
  retention: z.number().int().min(0).max(7 * 86_400_000).default(600_000),
  /** Events kept per run for replay; the oldest are trimmed first. */
  retention_max_events: z.number().int().min(1).max(1_000_000).default(10_000),
  /** `memory` only: characters of retained events kept in the process, over all runs. */
  retention_max_bytes: z.number().int().min(1024).max(2 ** 40).default(64 * 1024 * 1024),
}).strict();

/** Replica liveness and shutdown settings. */
export const ReplicaSchema = z.object({
  /** This process's replica id, recorded as the owner of its runs (random when unset). */
  id: z.string().min(1).max(128).optional(),
  /** Milliseconds between heartbeats of the runs a replica owns. */
  heartbeat_interval: z.number().int().positive().default(2_000),
  /** Milliseconds without heartbeat after which another replica resumes a run. */
  lease: z.number().int().positive().default(15_000),
  /** Milliseconds between polls of the database for cancellations and lost runs. */
  poll_interval: z.number().int().positive().default(500),
  /**
   * Milliseconds running runs get to finish on SIGTERM/SIGINT before they are handed over to
   * another replica (resumed from their last checkpoint).
   */
  shutdown_grace: z.number().int().min(0).default(10_000),
}).strict();

/** How runs outlive the replica that started them (docs/deploy.md#durable-runs). */
export const RunsSchema = z.object({
  /**
   * Attempts a run may lose with their replica: a run whose replica is lost (or hands it over at
   * shutdown) is resumed from its last checkpoint as the next attempt; once this many attempts
   * were lost (hand-overs do not count), it fails.
   */
  max_attempts: z.number().int().min(1).max(100).default(3),
  /**
   * Runs this replica executes at once (docs/deploy.md#run-queue). A run beyond it waits
   * `queued` in the store until a replica has a free slot (an attached one as
   * `attached_at_capacity` says).
   */
  max_concurrent: z.number().int().min(1).max(100_000).default(1_000),
  /**
   * An attached run (its events streamed in the response) beyond `max_concurrent`: `wait` queues
   * it with the stream open (a `run_queued` event, then keep-alives until it starts); `reject`
   * answers 503 (`503004`) with `Retry-After`.
   */
  attached_at_capacity: z.enum(["wait", "reject"]).default("wait"),
  /**
   * The most unfinished runs (executing or queued) one tenant may have over all replicas; a start
   * beyond it is answered 429 (`429001`) with `Retry-After`. Unset: no limit.
   */
  tenant_max_runs: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * The most runs one tenant may execute at once over all replicas; its runs beyond it wait
   * `queued` (even on a replica with free slots), so slots stay free for other tenants. Unset: no
   * limit.
   */
  tenant_max_running: z.number().int().min(1).max(1_000_000).optional(),
  /**
   * The most runs one tenant may have waiting in the run queue; a start that would wait beyond it
   * is answered 429 (`429001`) with `Retry-After`. Unset: no limit.
   */
  tenant_max_queued: z.number().int().min(0).max(1_000_000).optional(),
}).strict();

/** How an attached run stream treats a client that reads slower than the run produces. */
export const AttachedSchema = z.object({
  /** Events the stream holds for its client before the run waits for it. */
  buffer: z.number().int().min(1).max(1_000_000).default(1024),
  /** Milliseconds the run waits for a full stream to drain before the client is dropped. */
  drain_timeout: z.number().int().positive().default(10_000),
  /**
   * Bytes an SSE stream (any: attached, re-attach, resumed, every protocol) may have written and
   * its client not read; a stream above it for `drain_timeout` is dropped (`slow_consumer`).
   */
  max_unread_bytes: z.number().int().min(65_536).default(8 * 1024 * 1024),
  /**
   * Bytes of large retained events (64 KiB or more: snapshots) that resumed streams replay at once,
   * over all runs; a stream past it waits up to `drain_timeout`, then is refused (503004).
   */
  max_replay_bytes: z.number().int().min(1_048_576).default(256 * 1024 * 1024),
  /**
   * Milliseconds a client of an attached run with `on_disconnect = "cancel"` has to re-attach
   * (any replica, by cursor) after its connection dropped or its replica was lost, before the run
   * is cancelled; 0 cancels at once.
   */
  reattach_grace: z.number().int().min(0).max(3_600_000).default(5_000),
}).strict();

/** Server-wide bounds on tool calls (docs/tools.md#how-many-at-once). */
export const ToolsRuntimeSchema = z.object({
  /**
   * JavaScript and Python calls running at once, over all tools (each in a process of its own);
   * more wait for a slot, at most their tool's `timeout`.
   */
  max_processes: z.number().int().min(1).max(10_000).default(16),
}).strict();

/** Bounds on the Prometheus metrics (docs/observability.md). */
export const MetricsRuntimeSchema = z.object({
  /**
   * Tenants `agentd_tenant_tokens_total` gives a label of their own, the first to spend tokens
   * first; every later tenant is counted under `tenant="_other"` (0: all of them are).
   */
  max_tenants: z.number().int().min(0).max(100_000).default(100),
}).strict();

/** The runtime block. */
export const RuntimeSchema = z.object({
  default_tenant_id: z.string().min(1).max(128).default("default"),
  /**
   * Bytes of JSON a session's conversation may hold (docs/api.md#size-limits): a client write past
   * it is refused (413002), a run's message past it ends the run `session_too_large`.
   */
  max_session_bytes: z.number().int().min(1_048_576).default(64 * 1024 * 1024),
  /**
   * Bytes of JSON one message a client writes may have (docs/api.md#size-limits), whatever the
   * body limit; past it the write is refused (413003).
   */
  max_message_bytes: z.number().int().min(1024).default(1_048_576),
  storage: StorageSchema.prefault({}),
  pubsub: PubSubSchema.prefault({}),
  replica: ReplicaSchema.prefault({}),
  runs: RunsSchema.prefault({}),
  attached: AttachedSchema.prefault({}),
  tools: ToolsRuntimeSchema.prefault({}),
  metrics: MetricsRuntimeSchema.prefault({}),
  /**
   * Whether each model step's request is kept as the provider received it (secrets masked, the
   * body cut at 64 KiB) for `GET /v1/runs/{id}/steps`. Unset: off, but on under `serve --watch`.
   */
  record_model_requests: z.boolean().optional(),
  log_level: z.enum(["debug", "info", "warn", "error"]).default("info"),
  /**
   * `text`: a line for people (time, level, message, fields; colours on a terminal); `json`: one
   * JSON object per line; `auto`: text when stderr is a terminal, JSON otherwise.
   */
  log_format: z.enum(["auto", "text", "json"]).default("auto"),
}).strict();
