/**
 * Wires a configuration into running services (store, pub/sub, models, tools, engine, run
 * service) and serves the app with `Deno.serve`. Used by `main.ts serve` and by the tests, which
 * start many independent servers in one process.
 */
import type { Config } from "./config/schema.ts";
import { createApp } from "./http/app.ts";
import { createLogger, type Logger } from "./log.ts";
import { openStore, type Store } from "./store/mod.ts";
import { createPubSub } from "./pubsub/mod.ts";
import type { PubSub } from "./pubsub/types.ts";
import { RunService } from "./runs/service.ts";
import { createEngine } from "./engine/mod.ts";
import { createModelClient, resolveModel } from "./models/mod.ts";
import { buildTools } from "./tools/mod.ts";

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  port: number;
  runs: RunService;
  store: Store;
  /** Graceful stop: no new runs, running ones get the grace period, then are interrupted. */
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
  /** Log sink; JSON lines to stderr by default. */
  log?: Logger;
  /** Replica id (random by default). */
  replicaId?: string;
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
  const log = options.log ?? createLogger(config.manifest.runtime.log_level);
  const storage = config.manifest.runtime.storage;
  const store = await openStore(
    storage.kind === "postgres"
      ? { kind: "postgres", url: storage.url!, schema: storage.schema }
      : { kind: "sqlite", path: storage.path ?? ":memory:" },
  );
  let pubsub: PubSub | undefined;
  try {
    pubsub = await createPubSub(config.manifest.runtime.pubsub, {
      onError: (err) => log.warn("pubsub error", { error: String(err) }),
    });
    const env = Deno.env.toObject();
    const engine = createEngine({
      config,
      store,
      models: createModelClient({ env }),
      tools: buildTools(config),
      resolveModel: (model) => resolveModel(config.manifest.agent.model, model, env),
    });
    const runs = new RunService({
      config,
      store,
      pubsub,
      engine,
      log,
      replicaId: options.replicaId ?? config.manifest.runtime.replica.id,
    });
    await runs.open();
    const app = createApp({ config, store, runs, log });
    const server = Deno.serve({
      hostname: options.host ?? http.host,
      port: options.port ?? http.port,
      onListen: () => {},
    }, app.fetch);
    const addr = server.addr as Deno.NetAddr;
    const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
    const url = `http://${host}:${addr.port}`;
    log.info("listening", { url, store: store.kind, pubsub: pubsub.kind, replica: runs.replicaId });

    let stopping: Promise<void> | undefined;
    const shutdown = (graceMs = config.manifest.runtime.replica.shutdown_grace) =>
      stopping ??= (async () => {
        log.info("shutting down", { grace_ms: graceMs, active_runs: runs.activeCount });
        await runs.shutdown(graceMs);
        await server.shutdown();
        await pubsub!.close();
        await store.close();
        log.info("stopped");
      })();

    if (options.handleSignals) {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        Deno.addSignalListener(signal, () => void shutdown());
      }
    }
    return { url, port: addr.port, runs, store, shutdown, finished: server.finished };
  } catch (err) {
    await pubsub?.close().catch(() => {});
    await store.close().catch(() => {});
    throw err;
  }
}
