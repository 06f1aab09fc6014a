/**
 * Wrappers that measure the services at their seams (Store, PubSub, tools, model client, engine)
 * so that none of them knows about metrics or tracing: `src/server.ts` wraps what it builds.
 */
import type { Engine } from "../engine/mod.ts";
import type { Run } from "../api/schemas.ts";
import type {
  ModelClient,
  ModelEvent,
  ModelMetrics,
  ModelStream,
  ModelUsage,
} from "../models/mod.ts";
import type { PubSub } from "../pubsub/mod.ts";
import type { Claimed, Store } from "../store/mod.ts";
import type { Tool } from "../tools/mod.ts";
import { wrapTool } from "../tools/mod.ts";
import type { AgentdMetrics } from "./agentd.ts";
import { SPAN_STATUS_ERROR } from "../otel.ts";
import { activeTraceIds } from "../log.ts";
import { iterateInSpan, type Tracer } from "./tracing.ts";

/**
 * A finished run's tokens (all its attempts', as its record sums them) by tenant: counted once,
 * where the outcome is persisted, so a run resumed on another replica is not counted twice.
 */
function countTenantTokens(metrics: AgentdMetrics, run: Pick<Run, "tenant_id" | "usage">): void {
  const usage = run.usage;
  if (!usage) return;
  const tenant = metrics.tenantLabel(run.tenant_id);
  for (const [kind, n] of usageKinds(usage)) {
    if (n !== undefined && n > 0) metrics.tenantTokens.inc({ tenant, kind }, n);
  }
}

/** Usage counts under their metric `kind` labels. */
function usageKinds(usage: ModelUsage): [string, number | undefined][] {
  return [
    ["input", usage.input_tokens],
    ["output", usage.output_tokens],
    ["reasoning", usage.reasoning_tokens],
    ["cached_input", usage.cached_input_tokens],
  ];
}

const seconds = (startedMs: number) => (performance.now() - startedMs) / 1000;

/**
 * The store with every method timed (`agentd_store_query_seconds{method}`, failures in
 * `agentd_store_errors_total`) and traced (`agentd.store.<method>`, only inside a request or run
 * span: the background polls would otherwise start a trace each). Run transitions are counted
 * where they are persisted: `createRun` (started), `finishRun` (the terminal status the row got),
 * `claimLostRuns` (failed out of attempts; resumed runs counted as resumes, lost or handed over), so every run is
 * counted once across replicas. `queueBehind` (started and queued). The run queue: `queueRun` (queued), `claimQueuedRuns` (each
 * taken run's wait), `queueDepth` (the depth gauge, as of the run service's last look).
 */
export function instrumentStore(store: Store, metrics: AgentdMetrics, tracer: Tracer): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  const after = (method: string, result: unknown) => {
    if (method === "createRun" || method === "queueBehind") metrics.runsStarted.inc();
    if (method === "finishRun") {
      const run = result as Run;
      // A run the sweeper failed meanwhile (out of attempts) was counted by the sweeper.
      if (run.status !== "running" && run.error?.code !== "replica_lost") {
        metrics.runs.inc({ status: run.status });
        countTenantTokens(metrics, run);
      }
    }
    if (method === "claimLostRuns") {
      const claimed = result as Claimed;
      metrics.runs.inc({ status: "failed" }, claimed.failed.length);
      const handedOver = claimed.resumed.filter((r) => r.handed_over).length;
      metrics.runsResumed.inc({ reason: "handoff" }, handedOver);
      metrics.runsResumed.inc({ reason: "lost" }, claimed.resumed.length - handedOver);
    }
    if (method === "queueRun" && result === true) metrics.runsQueued.inc();
    if (method === "queueBehind") metrics.runsQueued.inc();
    if (method === "queueDepth") metrics.runQueueDepth.set(undefined, result as number);
    if (method === "claimQueuedRuns") {
      for (const run of result as { created_at: number }[]) {
        metrics.runQueueWait.observe(undefined, Math.max(0, Date.now() - run.created_at) / 1000);
      }
    }
  };
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      let fn = wrapped.get(prop);
      if (!fn) {
        const method = prop;
        const timed = async (args: unknown[]) => {
          const started = performance.now();
          try {
            const result = await value.apply(target, args);
            after(method, result);
            return result;
          } catch (err) {
            metrics.storeErrors.inc({ method });
            throw err;
          } finally {
            metrics.storeDuration.observe({ method }, seconds(started));
          }
        };
        const name = `agentd.store.${method}`;
        const attributes = { "db.system": target.kind };
        fn = (...args: unknown[]) =>
          activeTraceIds() ? tracer.inSpan(name, attributes, () => timed(args)) : timed(args);
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}

/** The transport with publish timed (`agentd_pubsub_publish_seconds{transport}`). */
export function instrumentPubSub(pubsub: PubSub, metrics: AgentdMetrics): PubSub {
  const labels = { transport: pubsub.kind };
  return {
    kind: pubsub.kind,
    async publish(channel, message) {
      const started = performance.now();
      try {
        await pubsub.publish(channel, message);
      } finally {
        metrics.publishDuration.observe(labels, seconds(started));
      }
    },
    async append(channel, entries, message) {
      const started = performance.now();
      try {
        await pubsub.append(channel, entries, message);
      } finally {
        metrics.publishDuration.observe(labels, seconds(started));
      }
    },
    seal: (channel) => pubsub.seal(channel),
    history: (channel, after) => pubsub.history(channel, after),
    subscribe: (channel) => pubsub.subscribe(channel),
    close: () => pubsub.close(),
  };
}

/**
 * The tools with every call counted and timed (`agentd_tool_calls_total{tool,outcome}`,
 * `agentd_tool_duration_seconds{tool}`) and traced (`agentd.tool.call`). A tool reports failure
 * as an outcome with `is_error`, never a throw; a throw is counted as an error all the same.
 */
export function instrumentTools(
  tools: Map<string, Tool>,
  metrics: AgentdMetrics,
  tracer: Tracer,
): Map<string, Tool> {
  const out = new Map<string, Tool>();
  for (const [name, tool] of tools) {
    out.set(
      name,
      wrapTool(tool, (args, ctx) =>
        tracer.inSpan("agentd.tool.call", {
          "agentd.tool.name": name,
          "agentd.tool_call_id": ctx.tool_call_id,
          "agentd.run_id": ctx.run_id,
        }, async (span) => {
          const started = performance.now();
          let outcome: "ok" | "error" = "error";
          try {
            const result = await tool.call(args, ctx);
            if (result.is_error) {
              span.setStatus({ code: SPAN_STATUS_ERROR, message: "the tool reported an error" });
            } else {
              outcome = "ok";
            }
            return result;
          } finally {
            metrics.toolCalls.inc({ tool: name, outcome });
            metrics.toolDuration.observe({ tool: name }, seconds(started));
          }
        })),
    );
  }
  return out;
}

/** The model client's observation hooks, feeding the model metrics. */
export function modelMetrics(metrics: AgentdMetrics): ModelMetrics {
  return {
    onAttempt(info) {
      const outcome = info.ok ? "ok" : info.retrying ? "retried" : "failed";
      const labels = { provider: info.provider, model: info.model, outcome };
      metrics.modelAttempts.inc(labels);
      metrics.modelAttemptDuration.observe(labels, info.ms / 1000);
    },
    onFirstToken(info) {
      metrics.modelFirstToken.observe(
        { provider: info.provider, model: info.model },
        info.ms / 1000,
      );
    },
    onUsage({ provider, model, usage }) {
      for (const [kind, n] of usageKinds(usage)) {
        if (n !== undefined && n > 0) metrics.modelTokens.inc({ provider, model, kind }, n);
      }
    },
  };
}

/**
 * The model client with one `agentd.model.open` span per model step: from opening the stream
 * (attempts and retries included) until the stream ends, with the attempts, the establishment
 * time and the time to the first output as attributes.
 */
export function traceModelClient(client: ModelClient, tracer: Tracer): ModelClient {
  return {
    async open(model, request, signal) {
      const span = tracer.begin("agentd.model.open", {
        "gen_ai.system": model.provider,
        "gen_ai.request.model": model.model,
      });
      const opened = performance.now();
      let stream: ModelStream;
      try {
        stream = await span.run(() => client.open(model, request, signal));
      } catch (err) {
        span.fail(err);
        span.end();
        throw err;
      }
      // A span that records nothing (OpenTelemetry off) needs no layer around every event.
      if (!span.recording) {
        span.end();
        return stream;
      }
      span.setAttribute("agentd.model.attempts", stream.attempts);
      span.setAttribute("agentd.model.establish_ms", stream.establish_ms);
      let first = true;
      const events = iterateInSpan(span, stream.events, (s, event: ModelEvent) => {
        if (event.type === "finish") {
          // OpenTelemetry GenAI semantic conventions: what the provider reported.
          s.setAttribute("gen_ai.response.finish_reasons", [event.reason]);
          const usage = event.usage ?? {};
          if (usage.input_tokens !== undefined) {
            s.setAttribute("gen_ai.usage.input_tokens", usage.input_tokens);
          }
          if (usage.output_tokens !== undefined) {
            s.setAttribute("gen_ai.usage.output_tokens", usage.output_tokens);
          }
        }
        if (!first || !isOutput(event)) return;
        first = false;
        s.setAttribute("agentd.model.first_output_ms", Math.round(performance.now() - opened));
      });
      return { ...stream, events };
    },
  };
}

/** Whether a model event is output (not the finish or warnings), the end of the time to first token. */
function isOutput(event: ModelEvent): boolean {
  return event.type !== "finish" && event.type !== "warnings";
}

/**
 * The engine with one `agentd.run` span per run execution (model, tool and store spans of the run
 * are its children); the run's final status becomes an attribute, and `failed` an error status.
 */
export function traceEngine(engine: Engine, tracer: Tracer): Engine {
  return {
    prepare: (ids, request) => engine.prepare(ids, request),
    execute(plan, ids, signal, options) {
      return tracer.traceGenerator(
        "agentd.run",
        {
          "agentd.run_id": ids.run_id,
          "agentd.session_id": ids.session_id,
          "agentd.tenant": ids.tenant_id,
        },
        engine.execute(plan, ids, signal, options),
        (span, event) => {
          if (event.kind !== "run_finished") return;
          span.setAttribute("agentd.run.status", event.status);
          if (event.status === "failed") {
            span.setStatus({
              code: SPAN_STATUS_ERROR,
              message: event.error?.message ?? "the run failed",
            });
          }
        },
      );
    },
  };
}
