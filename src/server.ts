/**
 * Wires a configuration into running services (store, pub/sub, models, tools, engine, runs) and
 * serves the app (http/listener.ts); used by `main.ts serve` and by tests (many servers a process).
 */
import type { Config, Manifest } from "./config/schema.ts";
import { createApp } from "./http/app.ts";
import type { AddOn } from "./http/kit/mod.ts";
import { agUiAddOn } from "./protocols/ag_ui/mod.ts";
import { aiSdkAddOn } from "./protocols/ai_sdk/mod.ts";
import { a2aAddOn } from "./protocols/a2a/mod.ts";
import type { Listener } from "./http/listener.ts";
import { createLogger, type Logger, resolveLogFormat, withSecrets } from "./log.ts";
import { secretScrubber, secretValues } from "./secrets.ts";
import type { Store } from "./store/mod.ts";
import { openConfiguredStore } from "./server_store.ts";
import { createPubSub } from "./pubsub/mod.ts";
import type { PubSub } from "./pubsub/mod.ts";
import { RunService } from "./runs/service.ts";
import { createEngine } from "./engine/mod.ts";
import {
  createModelClient,
  credentialEnvNames,
  ModelConfigError,
  preloadProvider,
  resolveModel,
} from "./models/mod.ts";
import {
  buildTools,
  closeTools,
  sandboxProblems,
  scrubTools,
  ToolConfigError,
  toolWarnings,
} from "./tools/mod.ts";
import type { McpServers } from "./tools/mcp/mod.ts";
import type { Tool } from "./tools/mod.ts";
import type { Clock } from "./clock.ts";
import {
  type AgentdMetrics,
  createMetrics,
  createTracer,
  instrumentPubSub,
  instrumentStore,
  instrumentTools,
  modelMetrics,
  traceEngine,
  traceModelClient,
} from "./metrics/mod.ts";

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  runs: RunService;
  store: Store;
  /** This server's metrics (what `GET /metrics` renders). */
  metrics: AgentdMetrics;
  /** Graceful stop: no new runs, running ones get the grace period, then are handed over. */
  shutdown(graceMs?: number): Promise<void>;
  /** Resolves when the server has stopped. */
  finished: Promise<void>;
}

/** Options of `startServer`. */
export interface ServerOptions {
  host?: string;
  port?: number;
  /** Install SIGINT/SIGTERM handlers for graceful shutdown (the CLI does; tests do not). */
  handleSignals?: boolean;
  /** The logger to use; by default one at `runtime.log_level` writing to `logWrite`. */
  log?: Logger;
  /** Where the default logger writes its lines (stderr by default). */
  logWrite?: (line: string) => void;
  /** Whether the log goes to a terminal (`log_format = "auto"`); stderr's without `logWrite`. */
  logTerminal?: boolean;
  /** Replica id (random by default). */
  replicaId?: string;
  /** The time records carry and leases are measured in (real time by default; tests move it). */
  clock?: Clock;
}

/** The manifest cannot run (tools, model, MCP servers); one line per problem. */
export class StartupError extends Error {
  constructor(readonly problems: string[]) {
    super(`the manifest cannot run:\n  ${problems.join("\n  ")}`);
    this.name = "StartupError";
  }
}

/**
 * Checks what schema validation cannot: tool modules exist and fit their kind, the OS sandbox of
 * Python tools works on this host, and the agent's model resolves (known provider, allowed
 * model). Returns one line per problem; `toolWarnings` has what runs but deserves a warning.
 */
export async function checkRuntime(
  config: Config,
  env: Record<string, string>,
): Promise<string[]> {
  const problems: string[] = [];
  try {
    buildTools(config);
    problems.push(...await sandboxProblems(config));
  } catch (err) {
    if (!(err instanceof ToolConfigError)) throw err;
    problems.push(...err.problems);
  }
  try {
    resolveModel(config.manifest.agent.model, null, env);
  } catch (err) {
    if (!(err instanceof ModelConfigError)) throw err;
    for (const field of err.fields) {
      problems.push(`${field.field}: ${field.errors.map((e) => e.message ?? e.code).join("; ")}`);
    }
  }
  return problems;
}

/** The protocol add-ons the manifest's `http_server { protocol { ... } }` block switches on. */
export function protocolAddOns(manifest: Manifest): AddOn[] {
  const protocol = manifest.http_server?.protocol;
  const addOns: AddOn[] = [];
  if (protocol?.ag_ui) addOns.push(agUiAddOn(protocol.ag_ui));
  if (protocol?.a2a) addOns.push(a2aAddOn(protocol.a2a));
  if (protocol?.ai_sdk) addOns.push(aiSdkAddOn(protocol.ai_sdk));
  return addOns;
}

/** The services of one configuration and the app serving them, without a listener. */
export interface Services {
  /** The HTTP application (`app.fetch` answers a `Request`). */
  app: { fetch: (request: Request) => Response | Promise<Response> };
  runs: RunService;
  store: Store;
  pubsub: PubSub;
  metrics: AgentdMetrics;
  log: Logger;
  /** Starts what the first runs need (tools' processes, the provider) and, later, the store's. */
  prepare(): void;
  /**
   * Graceful stop of everything `startServices` opened: the runs (within `graceMs`), MCP servers
   * and tools, then `beforeTransports` (the listener's close), then pub/sub and the store (not
   * with `keepStore`, nor when they were `shared`).
   */
  close(
    graceMs?: number,
    beforeTransports?: () => Promise<void>,
    keepStore?: boolean,
  ): Promise<void>;
}

/** Options of `startServices`: those of `startServer` that are not about listening. */
export type ServicesOptions = Omit<ServerOptions, "host" | "port" | "handleSignals"> & {
  /** Whether the listener is at its connection cap (`/readyz` answers 503003 then). */
  saturated?: () => boolean;
  /** An open store and pub/sub (the dev loop's previous agent's), used and left open. */
  shared?: { store: Store; pubsub: PubSub };
  /** Whether other isolates may subscribe to a `memory` pub/sub (serverless: yes, the default). */
  otherIsolates?: boolean;
};

/**
 * Opens every service the configuration names (store, MCP servers, pub/sub, models, tools,
 * engine, run service) and builds the app; `startServer` puts a listener in front of it, the
 * serverless entry (serverless.ts) hands it to `deno serve`.
 */
export async function startServices(
  config: Config,
  options: ServicesOptions = {},
): Promise<Services> {
  const env = Deno.env.toObject();
  const problems = await checkRuntime(config, env);
  if (problems.length > 0) throw new StartupError(problems);
  // Secrets of the configuration and environment never reach a log line, whoever logs, nor an
  // event or a record through a provider's error body or a tool's result.
  const secrets = secretValues(config, env, { credentialEnv: credentialEnvNames() });
  const runtime = config.manifest.runtime;
  const terminal = options.logTerminal ?? (options.logWrite ? false : Deno.stderr.isTerminal());
  const log = options.log
    ? withSecrets(options.log, secrets)
    : createLogger(runtime.log_level, {}, options.logWrite, {
      secrets,
      ...resolveLogFormat(runtime.log_format, terminal),
    });
  for (const warning of toolWarnings(config)) log.warn("tool isolation", { warning });
  // One registry and tracer per server, wrapped around the services: none of them knows of either.
  const metrics = createMetrics({ maxTenants: runtime.metrics.max_tenants });
  const tracer = createTracer();
  const shared = options.shared;
  const later = Promise.withResolvers<void>(); // prepare() resolves: the store's background work
  const store = shared?.store ??
    instrumentStore(await openConfiguredStore(config, log, options.clock, later), metrics, tracer);
  let pubsub: PubSub | undefined;
  let mcp: Pick<McpServers, "tools" | "close"> | undefined;
  // Built again to keep (checkRuntime's started nothing): sandboxes start early, stop at shutdown.
  const tools = buildTools(config);
  try {
    mcp = await startMcp(config, log, env);
    pubsub = shared?.pubsub ?? instrumentPubSub(
      await createPubSub(config.manifest.runtime.pubsub, {
        otherIsolates: options.otherIsolates,
        onError: (err) => {
          metrics.pubsubErrors.inc({ code: (err as { code?: string })?.code ?? "unknown" });
          log.warn("pubsub error", { error: String(err) });
        },
      }),
      metrics,
    );
    // The manifest's tools and the MCP servers' get the same wrappers (results scrubbed of
    // secrets, calls measured); MCP tool lists change, so they are wrapped again when they do.
    const scrub = secretScrubber(secrets);
    const measureTools = (tools: Map<string, Tool>) =>
      instrumentTools(scrubTools(tools, scrub), metrics, tracer);
    const measuredMcp = cachedByIdentity(measureTools);
    const engine = traceEngine(
      createEngine({
        config,
        store,
        models: traceModelClient(
          createModelClient({ env, metrics: modelMetrics(metrics), secrets }),
          tracer,
        ),
        tools: measureTools(tools),
        mcpTools: () => measuredMcp(mcp!.tools()),
        log,
        clock: options.clock,
        resolveModel: (model) => resolveModel(config.manifest.agent.model, model, env),
      }),
      tracer,
    );
    const runs = new RunService({
      config,
      store,
      pubsub,
      engine,
      log,
      replicaId: options.replicaId ?? config.manifest.runtime.replica.id,
      clock: options.clock,
      claimAtOpen: !shared,
    });
    await runs.open();
    metrics.runsActive.collectWith(() => metrics.runsActive.set(undefined, runs.activeCount));
    const app = createApp(
      {
        config,
        store,
        runs,
        log,
        metrics,
        saturated: options.saturated,
        mcpTools: () => mcp!.tools(),
      },
      protocolAddOns(config.manifest),
    );
    const opened = pubsub;
    return {
      app,
      runs,
      store,
      pubsub: opened,
      metrics,
      log,
      prepare() {
        later.resolve();
        preloadProvider(config.manifest.agent.model.provider);
        const preparing = [...tools.values()].filter((tool) => tool.prepare);
        const names = preparing.map((tool) => tool.name);
        if (names.length > 0) log.info("starting tool processes", { tools: names });
        for (const tool of preparing) {
          tool.prepare!().catch((err) =>
            log.warn("tool could not be prepared", { tool: tool.name, error: String(err) })
          );
        }
      },
      async close(graceMs = runtime.replica.shutdown_grace, beforeTransports, keepStore) {
        // Each wait said before it starts, so a stop that hangs shows what it hangs on.
        const active_runs = runs.activeCount;
        if (active_runs > 0) log.info("waiting for runs", { active_runs, grace_ms: graceMs });
        await runs.shutdown(graceMs);
        const mcpNames = Object.keys(config.manifest.mcp_server);
        if (mcpNames.length > 0) log.info("stopping mcp servers", { mcp_servers: mcpNames });
        await mcp!.close();
        await closeTools(tools);
        await beforeTransports?.();
        if (shared || keepStore) return;
        await opened.close();
        await store.close();
      },
    };
  } catch (err) {
    await mcp?.close().catch(() => {});
    await closeTools(tools).catch(() => {});
    if (!shared) {
      await pubsub?.close().catch(() => {});
      await store.close().catch(() => {});
    }
    throw err;
  }
}

/** Opens every service the configuration names and serves the HTTP API. */
export async function startServer(
  config: Config,
  options: ServerOptions = {},
): Promise<RunningServer> {
  const http = config.manifest.http_server;
  if (!http) {
    throw new Error(
      "the manifest has no http_server block: the HTTP API exists only when it has one",
    );
  }
  // Read by the app's readiness check, which is built before the listener.
  let listener: Listener | undefined;
  const services = await startServices(config, {
    log: options.log,
    logWrite: options.logWrite,
    logTerminal: options.logTerminal,
    replicaId: options.replicaId,
    clock: options.clock,
    saturated: () => listener?.saturated ?? false,
    otherIsolates: false, // the only isolate: see docs/pubsub.md, "memory"
  });
  const { runs, store, metrics, log } = services;
  try {
    const { listen } = await import("./http/listener.ts"); // node:http, not for serverless.ts
    listener = await listen(services.app.fetch, {
      host: options.host ?? http.host,
      port: options.port ?? http.port,
      limits: http,
      log,
      metrics,
    });
  } catch (err) {
    await services.close(0).catch(() => {});
    throw err;
  }
  const url = listener.url;
  log.info("listening", {
    url,
    store: store.kind,
    pubsub: services.pubsub.kind,
    replica: runs.replicaId,
  });
  // Tools' first sandbox processes and the provider's package load now, before the first call.
  services.prepare();

  let stopping: Promise<void> | undefined;
  const shutdown = (graceMs = config.manifest.runtime.replica.shutdown_grace) =>
    stopping ??= (async () => {
      log.info("shutting down", { grace_ms: graceMs, active_runs: runs.activeCount });
      await services.close(graceMs, () => listener.close());
      log.info("stopped");
    })();

  if (options.handleSignals) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => void shutdown());
    }
  }
  return {
    url,
    port: listener.port,
    runs,
    store,
    metrics,
    shutdown,
    // After a shutdown, when everything it closes is closed (the listener closes half-way).
    finished: listener.finished.then(() => stopping),
  };
}

const NO_MCP_TOOLS = new Map<string, Tool>();
const NO_MCP = { tools: () => NO_MCP_TOOLS, close: () => Promise.resolve() };

/**
 * Connects the manifest's MCP servers. The MCP SDK (and its JSON Schema validator) is loaded only
 * when the manifest names a server: start-up time of every other deployment.
 */
async function startMcp(
  config: Config,
  log: Logger,
  env: Record<string, string>,
): Promise<Pick<McpServers, "tools" | "close">> {
  const names = Object.keys(config.manifest.mcp_server);
  if (names.length === 0) return NO_MCP;
  log.info("starting mcp servers", { mcp_servers: names });
  const { McpStartupError, startMcpServers } = await import("./tools/mcp/mod.ts");
  return await startMcpServers(config, { log, env }).catch((err) => {
    throw err instanceof McpStartupError ? new StartupError(err.problems) : err;
  });
}

/** `derive` of its latest input, computed again only when the input is another object. */
function cachedByIdentity<A extends object, B>(derive: (input: A) => B): (input: A) => B {
  let last: { input: A; output: B } | undefined;
  return (input) => {
    if (last?.input !== input) last = { input, output: derive(input) };
    return last.output;
  };
}
