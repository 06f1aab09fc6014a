/**
 * The dev loop (`serve --watch`, what `deno task dev` runs): the server watches the manifest, the
 * tools' files and a `.env` next to the manifest, and on a change builds the agent again. A change
 * is validated first: a broken save keeps the old agent serving and prints its problems with
 * `file:line:col`. A good one takes effect for the next request: the listener, the store and the
 * pub/sub stay, so open streams go on; runs in flight finish on the old agent, whose tool
 * processes are then stopped (the new agent starts its own, from the files as they are now).
 */
import { dirname, join, resolve } from "node:path";
import type { Config } from "./config/schema.ts";
import { CorsSchema } from "./config/schema/http_server.ts";
import { ConfigError } from "./config/errors.ts";
import { loadConfig } from "./config/load.ts";
import { locateMessages } from "./config/locate.ts";
import { listen, type Listener } from "./http/listener.ts";
import {
  checkRuntime,
  type RunningServer,
  type ServerOptions,
  type Services,
  startServices,
} from "./server.ts";

/**
 * Origins the dev loop allows by CORS when the manifest has no `http_server { cors }` block: pages
 * of a local dev server (Vite, Next) on any port of this machine. Plain `serve` allows none.
 */
export const DEV_ORIGINS = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/**
 * The configuration as the dev loop serves it: the manifest's, with `http_server { cors }`
 * allowing `DEV_ORIGINS` when the manifest says nothing about CORS, and model requests recorded
 * (`runtime.record_model_requests`) unless the manifest says otherwise.
 */
export function withDevDefaults(config: Config): Config {
  const { http_server: http, runtime } = config.manifest;
  return {
    ...config,
    manifest: {
      ...config.manifest,
      runtime: { ...runtime, record_model_requests: runtime.record_model_requests ?? true },
      http_server: http && !http.cors
        ? { ...http, cors: CorsSchema.parse({ allow_origins: DEV_ORIGINS }) }
        : http,
    },
  };
}

/** Milliseconds of quiet after a change before the agent is built again (editors save twice). */
const SETTLE_MS = 150;

/** A running dev server. */
export interface DevServer extends RunningServer {
  /** Builds the agent again now (what a change does); resolves with the problems, if any. */
  reload(): Promise<string[]>;
}

/** Serves the manifest at `path` and builds its agent again whenever its files change. */
export async function startDevServer(
  path: string,
  manifestConfig: Config,
  options: ServerOptions & { report?: (line: string) => void } = {},
): Promise<DevServer> {
  const config = withDevDefaults(manifestConfig);
  const http = config.manifest.http_server!;
  // Said to the person at the terminal, whatever the log format: what to fix, where.
  const report = options.report ??
    ((line: string) => void Deno.stderr.writeSync(new TextEncoder().encode(`${line}\n`)));
  let listener: Listener | undefined;
  const servicesOptions = {
    log: options.log,
    logWrite: options.logWrite,
    logTerminal: options.logTerminal,
    clock: options.clock,
    saturated: () => listener?.saturated ?? false,
  };
  let current: Services = await startServices(config, servicesOptions);
  // The store and pub/sub of the first agent serve every later one; closed at the very end.
  const { store, pubsub } = current;
  const log = current.log;
  try {
    listener = await listen((request) => current.app.fetch(request), {
      host: options.host ?? http.host,
      port: options.port ?? http.port,
      limits: http,
      log,
      metrics: current.metrics,
    });
  } catch (err) {
    await current.close(0).catch(() => {});
    throw err;
  }
  log.info("listening", { url: listener.url, store: current.store.kind, watching: true });
  current.prepare();

  const retired = new Set<Promise<void>>();
  let reloading = Promise.resolve<string[]>([]);
  const reload = () =>
    reloading = reloading.then(async () => {
      await loadDotEnv(dirname(resolve(path)));
      let next: Config;
      try {
        next = withDevDefaults(await loadConfig(path));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        return await refuse(err.messages);
      }
      const problems = await checkRuntime(next, Deno.env.toObject());
      if (problems.length > 0) return await refuse(problems);
      const previous = current;
      try {
        current = await startServices(next, {
          ...servicesOptions,
          shared: { store, pubsub },
        });
      } catch (err) {
        return await refuse([err instanceof Error ? err.message : String(err)]);
      }
      current.prepare();
      // The old agent stops taking runs; those in flight finish on it, then its tools stop.
      const closing = previous.close(next.manifest.runtime.replica.shutdown_grace, undefined, true)
        .catch((err) => log.warn("the previous agent did not stop cleanly", { error: String(err) }))
        .finally(() => retired.delete(closing));
      retired.add(closing);
      watched = watchList(path, next);
      log.info("reloaded", { manifest: path, tools: Object.keys(next.manifest.tool) });
      return [];
    });
  const refuse = async (messages: readonly string[]) => {
    const text = await Deno.readTextFile(path).catch(() => "");
    const placed = locateMessages(path, text, messages);
    report(`reload refused, still serving the previous agent: ${path} has problems:`);
    for (const line of placed) report(`  ${line}`);
    return placed;
  };

  let watched = watchList(path, config);
  const watcher = Deno.watchFs(dirname(resolve(path)), { recursive: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watching = (async () => {
    for await (const event of watcher) {
      if (!event.paths.some((p) => watched(p))) continue;
      clearTimeout(timer);
      timer = setTimeout(
        () => void reload().catch((err) => report(`reload failed: ${err}`)),
        SETTLE_MS,
      );
    }
  })();

  let stopping: Promise<void> | undefined;
  const shutdown = (graceMs = config.manifest.runtime.replica.shutdown_grace) =>
    stopping ??= (async () => {
      log.info("shutting down", { grace_ms: graceMs, active_runs: current.runs.activeCount });
      clearTimeout(timer);
      watcher.close();
      await watching;
      await reloading.catch(() => {});
      await Promise.all(retired);
      await current.close(graceMs, () => listener!.close(), true);
      await pubsub.close();
      await store.close();
      log.info("stopped");
    })();
  if (options.handleSignals) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, () => void shutdown());
    }
  }
  return {
    url: listener.url,
    port: listener.port,
    get runs() {
      return current.runs;
    },
    store,
    get metrics() {
      return current.metrics;
    },
    shutdown,
    finished: listener.finished.then(() => stopping),
    reload,
  };
}

/** Which changed paths rebuild the agent: the manifest, `.env` files beside it, tool sources. */
function watchList(path: string, config: Config): (changed: string) => boolean {
  const manifest = resolve(path);
  const dir = dirname(manifest);
  const toolDirs = Object.values(config.manifest.tool).map((tool) => dirname(tool.module));
  return (changed) => {
    if (changed === manifest) return true;
    if (dirname(changed) === dir && /^\.env/.test(changed.slice(dir.length + 1))) return true;
    // The store's files and editors' temporary files are not sources.
    if (/[/\\]\.agentd[/\\]|\.(db|db-wal|db-shm|swp)$|~$/.test(changed)) return false;
    return /\.(m?[jt]s|py)$/.test(changed) &&
      toolDirs.some((d) => changed === d || changed.startsWith(join(d, "/")));
  };
}

/** Sets the variables of a `.env` beside the manifest (`NAME=value` lines), if there is one. */
export async function loadDotEnv(dir: string): Promise<void> {
  const text = await Deno.readTextFile(join(dir, ".env")).catch(() => undefined);
  if (text === undefined) return;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const value = m[2].replace(/^(["'])(.*)\1$/, "$2");
    Deno.env.set(m[1], value);
  }
}
