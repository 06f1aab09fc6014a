/**
 * The stdio transport of MCP servers: the server's program as a Deno subprocess that leads its own
 * process group, speaking newline-delimited JSON-RPC on stdin/stdout (the SDK's `ReadBuffer` and
 * `serializeMessage` frame the messages, the SDK's `Client` runs the protocol over it).
 *
 * Not the SDK's `StdioClientTransport`: that one signals only the program it started, so a wrapper
 * (`npx`, `uvx`, `sh -c`) that does not forward signals leaves the real server running after
 * agentd stops. Here the whole group is signalled, first SIGTERM, then SIGKILL, and an exit of the
 * program takes down what it left behind in the group. Both directions are bounded in bytes: a line
 * from the server (`MAX_LINE_BYTES`, framed by line_reader.ts rather than the SDK's quadratic
 * `ReadBuffer`) and what waits to be written to a server that does not read (`MAX_QUEUED_BYTES`,
 * `MAX_QUEUED_MESSAGES`).
 */
// The SDK's `./*.js` subpaths map their types to `*.js.d.ts`, which does not exist: name them.
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types";
import { LineReader } from "./line_reader.ts";

/**
 * Largest line (one JSON-RPC message) a stdio server may write, in bytes. A longer one is not
 * buffered; a reply among them fails its request with `REPLY_TOO_LARGE` (docs/tools.md#mcp-limits).
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/**
 * Bytes agentd may have queued for a stdio server that it has not read from its stdin yet; past
 * it the server counts as stuck: its process group is killed, and the connection restarts it.
 */
export const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/**
 * Messages agentd may have queued for a stdio server that it has not read yet (each pending one
 * holds a request's state besides its bytes); past it, as past `MAX_QUEUED_BYTES`.
 */
export const MAX_QUEUED_MESSAGES = 1024;
/** The JSON-RPC error code of a request whose reply was longer than `MAX_LINE_BYTES`. */
export const REPLY_TOO_LARGE: number = -32050;

/**
 * Environment variables a stdio server gets from agentd's own environment, when set: enough to
 * find programs, caches and a locale. Everything else only through the block's `env`.
 */
export const MCP_BASE_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "XDG_CACHE_HOME",
  "DENO_DIR",
  "SYSTEMROOT",
];

/** The environment of a stdio server: the base set from `from`, then the block's `env`. */
export function processEnv(
  env: Record<string, string> | undefined,
  from: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of MCP_BASE_ENV) if (from[name] !== undefined) out[name] = from[name];
  return { ...out, ...env };
}

/** Options of `ProcessTransport`. */
export interface ProcessTransportOptions {
  /** The program and its arguments. */
  command: readonly string[];
  /** The whole environment of the process. */
  env: Record<string, string>;
  cwd: string;
  /** Each line the process writes to stderr (cut to 2000 characters). */
  onStderr?: (line: string) => void;
  /** Milliseconds between SIGTERM and SIGKILL when closing; default 2000. */
  killGrace?: number;
}

/** Lines of stderr kept for error messages. */
const STDERR_LINES = 20;
const STDERR_LINE_LENGTH = 2000;

/** An MCP stdio transport over a Deno subprocess in its own process group. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #child: Deno.ChildProcess | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #status: Deno.CommandStatus | undefined;
  #stderr: string[] = [];
  #closing = false;
  #closed: Promise<void> | undefined;
  /** Bytes and messages handed to the writer and not yet taken by the pipe. */
  #queued = 0;
  #waiting = 0;
  readonly #encoder = new TextEncoder();

  /** A transport for the server process `options` describe (started by `start`). */
  constructor(private readonly options: ProcessTransportOptions) {}

  /** How the process ended, once it has. */
  get status(): Deno.CommandStatus | undefined {
    return this.#status;
  }

  /** The process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last lines the process wrote to stderr. */
  stderrTail(): string {
    return this.#stderr.join("\n");
  }

  start(): Promise<void> {
    if (this.#child) throw new Error("the transport is already started");
    const [program, ...args] = this.options.command;
    try {
      this.#child = new Deno.Command(program, {
        args,
        cwd: this.options.cwd,
        env: this.options.env,
        clearEnv: true,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        // setsid(): the server leads its own process group, so one signal reaches its children.
        detached: true,
      }).spawn();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        throw new Error(`the program '${program}' was not found (or cwd does not exist)`);
      }
      if (err instanceof Deno.errors.PermissionDenied) {
        throw new Error(`the program '${program}' cannot be run: permission denied`);
      }
      throw err;
    }
    const child = this.#child;
    this.#writer = child.stdin.getWriter();
    const out = child.stdout.getReader();
    const err = child.stderr.getReader();
    const reading = [this.#readStdout(out), this.#readStderr(err)];
    this.#closed = (async () => {
      this.#status = await child.status;
      // The program is gone: take down whatever it left running in its group.
      this.#signalGroup("SIGKILL");
      // A process that left the group may still hold the pipes: do not wait for it long.
      await settleWithin(reading, 1000);
      await Promise.all([out.cancel().catch(() => {}), err.cancel().catch(() => {})]);
      await this.#writer?.close().catch(() => {});
      this.onclose?.();
    })();
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#status || this.#closing) {
      throw new Error("the MCP server process is not running");
    }
    const bytes = this.#encoder.encode(serializeMessage(message));
    if (
      this.#queued + bytes.length > MAX_QUEUED_BYTES || this.#waiting >= MAX_QUEUED_MESSAGES
    ) {
      // The server does not read its stdin (or far slower than it asks): replies would pile up
      // here without end. It is stopped; the connection restarts it.
      this.#stuck ??= new Error(
        `the MCP server does not read its stdin (${this.#waiting} messages, ${this.#queued} ` +
          "bytes waiting); it is stopped",
      );
      this.onerror?.(this.#stuck);
      this.#signalGroup("SIGKILL");
      throw this.#stuck;
    }
    this.#queued += bytes.length;
    this.#waiting++;
    try {
      await this.#writer.write(bytes);
    } finally {
      this.#queued -= bytes.length;
      this.#waiting--;
    }
  }

  /** Set once the server was stopped for not reading its stdin. */
  #stuck: Error | undefined;

  /** Why the process was stopped by agentd while running, if it was. */
  get stopReason(): string | undefined {
    return this.#stuck?.message;
  }

  /** Stops the process group: stdin closed and SIGTERM, then SIGKILL after the grace period. */
  async close(): Promise<void> {
    if (!this.#child || !this.#closed) return;
    if (!this.#closing) {
      this.#closing = true;
      await this.#writer?.close().catch(() => {});
      if (!this.#status) {
        this.#signalGroup("SIGTERM");
        const timer = setTimeout(
          () => this.#signalGroup("SIGKILL"),
          this.options.killGrace ?? 2000,
        );
        await this.#child.status.catch(() => {});
        clearTimeout(timer);
      }
    }
    await this.#closed;
  }

  #signalGroup(signal: Deno.Signal): void {
    const pid = this.#child!.pid;
    try {
      Deno.kill(-pid, signal);
    } catch {
      // No such group any more (or no process groups on this platform): the program itself.
      if (this.#status) return;
      try {
        this.#child!.kill(signal);
      } catch { /* already exited */ }
    }
  }

  async #readStdout(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const lines = new LineReader(MAX_LINE_BYTES);
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const line of lines.push(value)) {
          if (line.kind === "too_large") {
            this.#tooLarge(line.bytes, line.id);
            continue;
          }
          if (line.text.trim() === "") continue;
          let message: JSONRPCMessage;
          try {
            message = deserializeMessage(line.text);
          } catch (err) {
            // A line that is not JSON-RPC (a server printing logs to stdout): skip it.
            this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${err}`));
            continue;
          }
          this.onmessage?.(message);
        }
      }
    } catch { /* cancelled */ }
  }

  /**
   * A line past `MAX_LINE_BYTES`, dropped unread: when it answered a request, that request fails
   * with `REPLY_TOO_LARGE` (its caller learns at once, not at its timeout).
   */
  #tooLarge(bytes: number, id: string | number | null): void {
    const why = `the MCP server wrote a message of ${bytes} bytes; at most ${MAX_LINE_BYTES} ` +
      "are read";
    if (id === null) {
      this.onerror?.(new Error(`${why}; it was dropped`));
      return;
    }
    this.onmessage?.({
      jsonrpc: "2.0",
      id,
      error: { code: REPLY_TOO_LARGE, message: `${why}; the reply was refused` },
    });
  }

  async #readStderr(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    const line = (text: string) => {
      const cut = text.length > STDERR_LINE_LENGTH ? text.slice(0, STDERR_LINE_LENGTH) + "…" : text;
      this.#stderr.push(cut);
      if (this.#stderr.length > STDERR_LINES) this.#stderr.shift();
      try {
        this.options.onStderr?.(cut);
      } catch { /* a failing log sink must not stop the reading */ }
    };
    try {
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        partial += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = partial.indexOf("\n")) >= 0) {
          line(partial.slice(0, nl).replace(/\r$/, ""));
          partial = partial.slice(nl + 1);
        }
        // A process writing one endless line is cut into pieces rather than kept whole.
        if (partial.length > STDERR_LINE_LENGTH) {
          line(partial);
          partial = "";
        }
      }
      if (partial) line(partial);
    } catch { /* cancelled */ }
  }
}

/** Waits for the promises, or at most `ms` milliseconds. */
async function settleWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    Promise.allSettled(promises),
    new Promise((resolve) => timer = setTimeout(resolve, ms)),
  ]);
  clearTimeout(timer);
}
