/**
 * A real `main.ts serve` process for a test: what a deployment runs, for tests that measure the
 * server alone (its RSS), kill it (a lost replica) or need it outside the test's event loop.
 * Declare it with `await using`: it is killed (SIGKILL if SIGTERM is not enough) and its manifest
 * removed when the scope ends.
 */

import { dirname } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A running server process. */
export interface ServerProcess extends AsyncDisposable {
  url: string;
  pid: number;
  /** Every stderr line so far (JSON log lines). */
  logs: string[];
  /** Resident set size now, in bytes (Linux `/proc/<pid>/status`). */
  rss(): Promise<number>;
  /** Sends a signal (SIGKILL: a crash, SIGSTOP/SIGCONT: a stall). */
  kill(signal: Deno.Signal): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit status. */
  stop(graceMs?: number): Promise<Deno.CommandStatus>;
}

/** Options of `startServerProcess`. */
export interface ServerProcessOptions {
  /**
   * The manifest, as JSON (an `http_server` block is added when missing), or the path of a
   * manifest file (any format), served from its own folder as `serve <file>` would be.
   */
  manifest: Record<string, unknown> | string;
  /**
   * Extra environment (`AGENT__*` overrides...). The test's own `AGENT__*` variables are not
   * passed on, so a developer's shell cannot change what the server runs.
   */
  env?: Record<string, string>;
  /** A name for error messages. */
  name?: string;
  /** The open-files limit (`ulimit -n`) of the process, set with `prlimit`; the test's by default. */
  openFiles?: number;
  /**
   * Run the serverless entry instead (`deno serve serverless.ts`, the manifest's path in
   * `AGENTD_MANIFEST`) with Deno Deploy's permissions: no subprocesses, no writes, no FFI.
   */
  serverless?: boolean;
}

/** The permissions of `deno serve serverless.ts` under Deno Deploy's constraints. */
export const DEPLOY_PERMISSIONS = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--deny-run",
  "--deny-write",
  "--deny-ffi",
];

/** Starts `main.ts serve` on a free loopback port and waits for its "listening" line. */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const name = options.name ?? "server";
  // A manifest given as JSON is written to a folder of the process's own, removed at the end.
  const { manifest } = options;
  let own: string | undefined;
  let manifestPath: string;
  if (typeof manifest === "string") manifestPath = manifest;
  else {
    own = await Deno.makeTempDir({ prefix: "agentd_proc_" });
    manifestPath = `${own}/agent.json`;
    await Deno.writeTextFile(manifestPath, JSON.stringify({ http_server: {}, ...manifest }));
  }
  const removeOwn = () => own ? Deno.remove(own, { recursive: true }).catch(() => {}) : undefined;
  const inherited = Object.entries(Deno.env.toObject()).filter(([k]) => !k.startsWith("AGENT__"));
  const serve = options.serverless
    ? [
      Deno.execPath(),
      "serve",
      "--config",
      `${ROOT}deno.json`,
      ...DEPLOY_PERMISSIONS,
      "--no-prompt",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      `${ROOT}serverless.ts`,
    ]
    : [
      Deno.execPath(),
      "run",
      "-A",
      "--no-prompt",
      `${ROOT}main.ts`,
      "serve",
      manifestPath,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
    ];
  // prlimit execs the command, so the child's pid is the server's.
  const command = options.openFiles === undefined
    ? serve
    : ["prlimit", `--nofile=${options.openFiles}:${options.openFiles}`, ...serve];
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: dirname(manifestPath),
    clearEnv: true,
    env: {
      ...Object.fromEntries(inherited),
      ...(options.serverless ? { AGENTD_MANIFEST: manifestPath } : {}),
      ...options.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const logs: string[] = [];
  const listening = Promise.withResolvers<string>();
  // `serve` prints `agentd <version> listening on <url>` on stdout whatever the log level;
  // `deno serve` prints `deno serve: Listening on <url>/` on stderr.
  const watch = (line: string) => {
    const url = /[Ll]istening on (http\S+?)\/?$/.exec(line)?.[1];
    if (url) listening.resolve(url);
  };
  const drained = Promise.all([
    lines(child.stdout, watch),
    lines(child.stderr, (line) => {
      logs.push(line);
      watch(line);
    }),
  ]).then(() =>
    listening.reject(new Error(`${name} exited before listening:\n${logs.join("\n")}`))
  );
  // A process that never listens is killed, so the test fails instead of hanging.
  const startup = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let url: string;
  try {
    url = await listening.promise;
    clearTimeout(startup);
  } catch (err) {
    clearTimeout(startup);
    await child.status;
    await drained;
    await removeOwn();
    throw err;
  }
  let stopped: Promise<Deno.CommandStatus> | undefined;
  const kill = (signal: Deno.Signal) => {
    try {
      child.kill(signal);
    } catch { /* already gone */ }
  };
  const stop = (graceMs = 10_000) =>
    stopped ??= (async () => {
      kill("SIGCONT");
      kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), graceMs);
      const status = await child.status;
      clearTimeout(timer);
      await drained;
      await removeOwn();
      return status;
    })();
  return {
    url,
    pid: child.pid,
    logs,
    async rss() {
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1]);
      return kb * 1024;
    },
    kill,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}

/** Calls `onLine` for every line of `stream` until it ends. */
async function lines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void) {
  let buffer = "";
  const decoder = new TextDecoder();
  try {
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n")) >= 0) {
        onLine(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
      }
    }
  } catch { /* the process is gone */ }
}
