/**
 * The `agentd` command line: `serve` runs an agent manifest over HTTP, `check` validates one.
 *
 * Exit codes: 0 success, 1 the server failed while running, 2 a user mistake (bad command or
 * flag, missing file, invalid manifest). User mistakes never print a stack trace.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import denoConfig from "./deno.json" with { type: "json" };
import { ConfigError } from "./src/config/errors.ts";
import { loadConfig } from "./src/config/load.ts";
import { locateMessages } from "./src/config/locate.ts";
import { maskSecrets } from "./src/config/mask.ts";
import type { Config } from "./src/config/schema.ts";

/** The program version, from `deno.json`. */
export const VERSION: string = denoConfig.version;

const DEFAULT_MANIFEST = "./agent.hcl";

const USAGE = `agentd ${VERSION}: run an LLM agent defined by a manifest and serve it over HTTP

Usage:
  agentd serve [MANIFEST] [--host HOST] [--port PORT] [--log-format FORMAT] [--watch]
  agentd check [MANIFEST]
  agentd --help | --version

Commands:
  serve   Serve the agent's HTTP API (native /v1 plus the protocol add-ons of the manifest).
          The manifest must have an http_server block.
  check   Validate the manifest and print the resolved configuration as JSON (secrets masked).

Arguments:
  MANIFEST          Path of the agent manifest (.hcl or .json); default ${DEFAULT_MANIFEST}

Options:
  --host HOST       serve: address to listen on; wins over http_server.host and AGENT__HTTP__HOST
  --port PORT       serve: port to listen on (0 picks a free one); wins over http_server.port
  --log-format FMT  serve: text (for people), json, or auto (text on a terminal, the default);
                    wins over runtime.log_format and AGENT__LOG__FORMAT
  --watch           serve: build the agent again when the manifest, a tool's file or .env
                    changes (a broken save keeps the previous agent); deno task dev uses it
  -h, --help        Show this help (also after a command)
  -V, --version     Print the version

Environment:
  \${env.NAME} in the manifest reads NAME; AGENT__SECTION__KEY variables override manifest
  values (see docs/configuration.md for the table).

Exit codes: 0 success, 1 the server failed while running, 2 usage or configuration error.`;

const LOG_FORMATS = ["auto", "text", "json"] as const;
type LogFormatName = typeof LOG_FORMATS[number];

/** A port taken by another process, as Deno or `node:http` reports it. */
function isAddrInUse(error: unknown): boolean {
  return error instanceof Deno.errors.AddrInUse ||
    (error as { code?: unknown } | null)?.code === "EADDRINUSE";
}

/** A mistake in how the command was invoked; reported with a hint to `--help`, exit code 2. */
class UsageError extends Error {}

interface Parsed {
  command?: string;
  positionals: string[];
  flags: Map<string, string | true>;
}

/** Every option of the command line; `node:util` `parseArgs` splits the arguments by them. */
const OPTIONS = {
  host: { type: "string" },
  port: { type: "string" },
  "log-format": { type: "string" },
  watch: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const;
type OptionName = keyof typeof OPTIONS;

/** The options valid before any command and after every command. */
const GLOBAL_OPTIONS: readonly OptionName[] = ["help", "version"];
/** What each command accepts on top of the global options. */
const COMMAND_OPTIONS: Record<string, readonly OptionName[]> = {
  serve: ["host", "port", "log-format", "watch"],
};

/**
 * Splits `args` with `parseArgs` (long and short options, `--opt=value`, `--`), then holds each
 * option to the command it follows: the library cannot scope options to a command by itself.
 */
function parseCommandLine(args: string[]): Parsed {
  const { tokens } = parseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const parsed: Parsed = { positionals: [], flags: new Map() };
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      if (parsed.command === undefined) parsed.command = token.value;
      else parsed.positionals.push(token.value);
      continue;
    }
    const name = token.name as OptionName;
    const allowed = [...GLOBAL_OPTIONS, ...(COMMAND_OPTIONS[parsed.command ?? ""] ?? [])];
    if (!allowed.includes(name)) {
      const where = parsed.command ? ` for ${parsed.command}` : "";
      throw new UsageError(`unknown option ${token.rawName}${where}`);
    }
    if (OPTIONS[name].type === "boolean") {
      if (token.value !== undefined) throw new UsageError(`option --${name} takes no value`);
      parsed.flags.set(name, true);
      continue;
    }
    // A missing value, or the next option taken as one (`--port --host x`).
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith("--"))) {
      throw new UsageError(`option --${name} needs a value`);
    }
    parsed.flags.set(name, token.value);
  }
  return parsed;
}

function parsePort(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 65535) {
    throw new UsageError(`--port expects a number from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function manifestArgument(parsed: Parsed): string {
  if (parsed.positionals.length > 1) {
    throw new UsageError(
      `${parsed.command} takes one manifest, got ${parsed.positionals.length}: ${
        parsed.positionals.join(" ")
      }`,
    );
  }
  return parsed.positionals[0] ?? DEFAULT_MANIFEST;
}

/** Loads the manifest, turning a `ConfigError` into a report that names the file. */
async function load(path: string): Promise<Config> {
  try {
    return await loadConfig(path);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Read and syntax errors already start with the file name: one of them is said as it is.
    if (error.messages.length === 1 && error.messages[0].startsWith(`${path}:`)) {
      throw new ReportedError(error.messages[0], []);
    }
    throw new ReportedError(`${path} is not a valid manifest:`, await placed(path, error.messages));
  }
}

/** `messages` with the `file:line:col` of what each is about, where the manifest shows it. */
async function placed(path: string, messages: readonly string[]): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => undefined);
  return text === undefined ? [...messages] : locateMessages(path, text, messages);
}

/** A configuration problem with its detail lines; exit code 2. */
class ReportedError extends Error {
  constructor(message: string, readonly details: readonly string[]) {
    super(message);
  }
}

async function check(parsed: Parsed): Promise<number> {
  const path = manifestArgument(parsed);
  const config = await load(path);
  const { checkRuntime } = await import("./src/server.ts");
  const { toolWarnings } = await import("./src/tools/mod.ts");
  const problems = await checkRuntime(config, Deno.env.toObject());
  if (problems.length > 0) {
    throw new ReportedError(`${path} cannot run:`, await placed(path, problems));
  }
  // MCP servers are started, asked for their tools and stopped again.
  const { McpStartupError, startMcpServers } = await import("./src/tools/mcp/mod.ts");
  const mcp = await startMcpServers(config).catch((error) => {
    throw error instanceof McpStartupError
      ? new ReportedError(`${path} cannot run:`, error.problems)
      : error;
  });
  const servers = mcp.describe();
  await mcp.close();
  console.log(JSON.stringify(maskSecrets(config), null, 2));
  // Notes and warnings go to stderr, so that stdout stays pure JSON for scripts.
  for (const line of servers) console.error(`note: ${line}`);
  for (const warning of toolWarnings(config)) console.error(`warning: ${warning}`);
  const { modelWarnings } = await import("./src/models/mod.ts");
  for (const warning of modelWarnings(config.manifest.agent.model, Deno.env.toObject())) {
    console.error(`warning: ${warning}`);
  }
  if (!config.manifest.http_server) {
    console.error(`note: ${path} has no http_server block, so "agentd serve" will refuse it`);
  }
  return 0;
}

async function serve(parsed: Parsed): Promise<number> {
  const path = manifestArgument(parsed);
  const host = parsed.flags.get("host");
  const portFlag = parsed.flags.get("port");
  const port = typeof portFlag === "string" ? parsePort(portFlag) : undefined;
  const logFormat = parsed.flags.get("log-format");
  if (logFormat !== undefined && !LOG_FORMATS.includes(logFormat as LogFormatName)) {
    throw new UsageError(
      `--log-format expects one of ${LOG_FORMATS.join(", ")}, got ${JSON.stringify(logFormat)}`,
    );
  }
  const watch = parsed.flags.has("watch");
  if (watch) {
    const { loadDotEnv } = await import("./src/dev.ts");
    await loadDotEnv(dirname(resolve(path)));
  }
  const loaded = await load(path);
  const config: Config = logFormat === undefined ? loaded : {
    ...loaded,
    manifest: {
      ...loaded.manifest,
      runtime: { ...loaded.manifest.runtime, log_format: logFormat as LogFormatName },
    },
  };
  if (!config.manifest.http_server) {
    console.error(
      `error: ${path} has no http_server block. The native HTTP API (/v1) exists only when the ` +
        `manifest has an http_server block; add one, for example:\n\n` +
        `  http_server {\n    port = 8080\n  }\n`,
    );
    return 2;
  }
  // Loaded on demand: `check` and `--help` should not pull in the store, pub/sub and providers.
  const { startServer, StartupError } = await import("./src/server.ts");
  const { startDevServer } = await import("./src/dev.ts");
  const serverOptions = {
    host: typeof host === "string" ? host : undefined,
    port,
    handleSignals: true,
  };
  const server =
    await (watch ? startDevServer(path, config, serverOptions) : startServer(config, serverOptions))
      .catch(async (error) => {
        if (error instanceof StartupError) {
          throw new ReportedError(`${path} cannot run:`, await placed(path, error.problems));
        }
        throw error;
      });
  // One plain line on stdout whatever the log level, for people and scripts waiting for the port.
  console.log(`agentd ${VERSION} listening on ${server.url}`);
  await server.finished;
  return 0;
}

/**
 * Runs the command line with `args` (without the program name) and returns the exit code;
 * user mistakes are printed to stderr here, so callers only need to exit with the result.
 */
export async function runCli(args: string[]): Promise<number> {
  try {
    const parsed = parseCommandLine(args);
    if (parsed.flags.has("version")) {
      console.log(VERSION);
      return 0;
    }
    if (parsed.flags.has("help") || parsed.command === "help") {
      console.log(USAGE);
      return 0;
    }
    if (parsed.command === undefined) {
      console.error(USAGE);
      return 2;
    }
    if (parsed.command === "serve") return await serve(parsed);
    if (parsed.command === "check") return await check(parsed);
    throw new UsageError(
      `unknown command ${JSON.stringify(parsed.command)}; expected serve or check`,
    );
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}\nRun "agentd --help" for usage.`);
      return 2;
    }
    if (error instanceof ReportedError || error instanceof ConfigError) {
      const details = error instanceof ReportedError ? error.details : error.messages;
      const headline = error instanceof ReportedError ? error.message : "invalid configuration:";
      console.error(`error: ${headline}`);
      for (const line of details) console.error(line);
      return 2;
    }
    if (isAddrInUse(error)) {
      console.error(
        `error: the address is already in use: ${(error as Error).message}\n` +
          `Another process listens on that port: stop it, or choose another port with ` +
          `--port (e.g. --port 8081; --port 0 picks a free one) or AGENT__HTTP__PORT.`,
      );
      return 1;
    }
    // Unexpected failures: a one-line message; the stack only on request.
    const message = error instanceof Error ? error.message : String(error);
    console.error(`error: ${message}`);
    if (Deno.env.get("AGENTD_DEBUG") && error instanceof Error) console.error(error.stack);
    return 1;
  }
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args));
}
