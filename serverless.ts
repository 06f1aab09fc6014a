/**
 * The serverless entry: a module whose default export is `{ fetch }`, what `deno serve` and Deno
 * Deploy run (`deno serve --allow-net --allow-env --allow-read serverless.ts`). docs/deploy.md.
 *
 * Configured from the environment: `AGENTD_MANIFEST` (the path of a `.hcl` or `.json` manifest,
 * `./agent.hcl` by default) or `AGENTD_MANIFEST_JSON` (the manifest itself, as JSON), plus the
 * usual `AGENT__*` overrides. The manifest is loaded and checked when the module is evaluated, so
 * a deployment that cannot work fails at start with a sentence that says why: tools and MCP
 * servers that need subprocesses where the host allows none (Deno Deploy), a SQLite file where
 * nothing may be written. The store, pub/sub and run service start on the first request (and
 * again on the next one if that failed: 503001 meanwhile), so an isolate that is never asked
 * opens no database connection.
 */
import { ConfigError } from "./src/config/errors.ts";
import { loadConfig, parseConfig } from "./src/config/load.ts";
import type { Config } from "./src/config/schema.ts";
import { errors } from "./src/errors.ts";
import { createLogger } from "./src/log.ts";
import { secretValues } from "./src/secrets.ts";
import { credentialEnvNames } from "./src/models/mod.ts";
import { checkRuntime, type Services, startServices } from "./src/server.ts";

/** The deployment cannot run as configured; the message says why and what works instead. */
export class ServerlessStartError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`agentd cannot start here:\n  ${problems.join("\n  ")}`);
    this.name = "ServerlessStartError";
  }
}

/** The manifest named by the environment: `AGENTD_MANIFEST_JSON`, else `AGENTD_MANIFEST`. */
export async function configFromEnv(env: Record<string, string>): Promise<Config> {
  try {
    const inline = env.AGENTD_MANIFEST_JSON;
    if (inline !== undefined) {
      return await parseConfig(inline, { filename: "AGENTD_MANIFEST_JSON.json", env });
    }
    return await loadConfig(env.AGENTD_MANIFEST ?? "./agent.hcl", env);
  } catch (error) {
    if (error instanceof ConfigError) throw new ServerlessStartError(error.messages);
    throw error;
  }
}

function granted(name: "run" | "write"): boolean {
  try {
    return Deno.permissions.querySync({ name }).state === "granted";
  } catch {
    return false;
  }
}

/**
 * What this manifest needs that the host does not allow: subprocesses (JavaScript and Python
 * tools, stdio MCP servers) without `--allow-run`, a SQLite file without `--allow-write`.
 */
export function hostProblems(
  config: Config,
  allowed: { run: boolean; write: boolean } = { run: granted("run"), write: granted("write") },
): string[] {
  const { manifest } = config;
  const problems: string[] = [];
  if (!manifest.http_server) {
    problems.push(
      "the manifest has no http_server block: the HTTP API exists only when it has one " +
        "(add `http_server {}`)",
    );
  }
  if (!allowed.run) {
    const instead = "offer the function as a client tool (the caller runs it and sends the " +
      "result back) or serve it from an MCP server over Streamable HTTP (mcp_server { url = ... })";
    for (const [name, tool] of Object.entries(manifest.tool)) {
      const language = tool.kind === "javascript" ? "JavaScript" : "Python";
      problems.push(
        `tool '${name}': ${language} tools run each call in a subprocess, and this host allows ` +
          `none (no --allow-run; Deno Deploy has no subprocesses); ${instead}`,
      );
    }
    for (const [name, server] of Object.entries(manifest.mcp_server)) {
      if (server.command === undefined) continue;
      problems.push(
        `mcp_server '${name}': a stdio MCP server is a subprocess, and this host allows none ` +
          `(no --allow-run; Deno Deploy has no subprocesses); reach it over Streamable HTTP ` +
          `instead (url = "https://...")`,
      );
    }
  }
  const storage = manifest.runtime.storage;
  if (!allowed.write && storage.kind !== "postgres" && storage.path !== ":memory:") {
    problems.push(
      "runtime.storage: a SQLite file needs a writable disk, and this host allows no writes " +
        "(no --allow-write; Deno Deploy has none); set AGENT__STORAGE__URL=postgres://...",
    );
  }
  return problems;
}

const env = Deno.env.toObject();
const config = await configFromEnv(env);
const refused = hostProblems(config);
if (refused.length > 0) throw new ServerlessStartError(refused);
// Model and tool checks: the same as `agentd serve` makes before listening.
const problems = await checkRuntime(config, env);
if (problems.length > 0) throw new ServerlessStartError(problems);

const log = createLogger(config.manifest.runtime.log_level, {}, undefined, {
  secrets: secretValues(config, env, { credentialEnv: credentialEnvNames() }),
});
let starting: Promise<Services> | undefined;

/** The services, started by the first request; a failed start is tried again by the next one. */
function services(): Promise<Services> {
  return starting ??= startServices(config, { log }).then(
    (started) => {
      log.info("started", { store: started.store.kind, pubsub: started.pubsub.kind });
      started.prepare();
      return started;
    },
    (error) => {
      starting = undefined;
      throw error;
    },
  );
}

// Under `deno serve` on a host of one's own, SIGTERM and SIGINT stop it as `agentd serve` stops:
// no new runs, running ones get `shutdown_grace`, then exit. Deno Deploy sends no signals (an
// isolate's runs cut off are interrupted by another isolate's sweeper after `lease`).
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  const started = await starting?.catch(() => undefined);
  await started?.close().catch((error) => log.error("shutdown", { error: String(error) }));
  Deno.exit(0);
};
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  try {
    Deno.addSignalListener(signal, () => void stop());
  } catch { /* a host without signals */ }
}

export default {
  async fetch(request: Request): Promise<Response> {
    let started: Services;
    try {
      started = await services();
    } catch (error) {
      log.error("could not start", { error: String(error) });
      const err = errors.unavailable("the service");
      return Response.json(err.toBody(), { status: err.status, headers: { "retry-after": "1" } });
    }
    return await started.app.fetch(request);
  },
} satisfies Deno.ServeDefaultExport;
