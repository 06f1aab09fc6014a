/**
 * Structured JSON logs: one line per record on stderr, filtered by level. Callers log ids and
 * outcomes, not bodies; as a second line of defence every record is scrubbed before it is written
 * (fields named like secrets, credentials inside URLs, bearer tokens, and the configured secret
 * values themselves). Lines written while a request is handled carry its `request_id` (an async
 * context the HTTP app sets), and with OpenTelemetry on, the active `trace_id`/`span_id`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { otel } from "./otel.ts";
import { REDACTED, replaceSecrets, usableSecrets } from "./secrets.ts";
import { formatText } from "./log_text.ts";

/** The trace and span id of the active span, for log correlation; undefined without one. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!otel) return undefined;
  const ctx = otel.trace.getActiveSpan()?.spanContext();
  return ctx && otel.trace.isSpanContextValid(ctx)
    ? { trace_id: ctx.traceId, span_id: ctx.spanId }
    : undefined;
}

/** How a record is written: one JSON object per line, or a line for people (log_text.ts). */
export type LogFormat = "json" | "text";

/**
 * The format `auto` stands for: text with colours when stderr is a terminal (colours off with
 * `NO_COLOR`), JSON otherwise; `text` and `json` are taken as they are (text without colours
 * unless stderr is a terminal).
 */
export function resolveLogFormat(
  format: LogFormat | "auto",
  terminal: boolean = Deno.stderr.isTerminal(),
): { format: LogFormat; colour: boolean } {
  const chosen = format === "auto" ? (terminal ? "text" : "json") : format;
  const colour = chosen === "text" && terminal && !Deno.env.get("NO_COLOR");
  return { format: chosen, colour };
}

/** Log levels, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger bound to a minimum level and fixed fields. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every record. */
  with(fields: Record<string, unknown>): Logger;
}

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Secret values (API keys, tokens, passwords) replaced wherever they appear in a record. */
  secrets?: readonly string[];
  /** `json` (the default) or `text`, the line for people. */
  format?: LogFormat;
  /** `text` only: ANSI colours. */
  colour?: boolean;
}

// Fields of the async flow that is being logged (the request id of the HTTP request handled).
const logContext = new AsyncLocalStorage<Record<string, unknown>>();

/**
 * Runs `fn` with `fields` added to every record logged within it, including by work it starts
 * (a run started by a request logs that request's id when it finishes).
 */
export function withLogContext<T>(fields: Record<string, unknown>, fn: () => T): T {
  return logContext.run({ ...logContext.getStore(), ...fields }, fn);
}

const encoder = new TextEncoder();

/** Writes one line to stderr, whole (a short write is continued, never interleaved mid-line). */
function writeStderr(line: string): void {
  const bytes = encoder.encode(`${line}\n`);
  for (let done = 0; done < bytes.length;) done += Deno.stderr.writeSync(bytes.subarray(done));
}

/** Creates a logger writing lines (JSON by default) to `write` (stderr by default). */
export function createLogger(
  level: LogLevel,
  base: Record<string, unknown> = {},
  write: (line: string) => void = writeStderr,
  options: LoggerOptions = {},
): Logger {
  const min = order[level];
  const secrets = usableSecrets(options.secrets);
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < min) return;
    const record = {
      time: new Date().toISOString(),
      level: lvl,
      msg,
      ...logContext.getStore(),
      ...activeTraceIds(),
      ...base,
      ...fields,
    };
    const clean = redact(record, secrets) as Record<string, unknown>;
    write(
      options.format === "text"
        ? formatText(clean, { colour: options.colour ?? false })
        : JSON.stringify(clean),
    );
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    with: (fields) => createLogger(level, { ...base, ...fields }, write, options),
  };
}

/**
 * A logger that scrubs `secrets` from every record before handing it to `inner` (for a logger
 * made elsewhere, such as a test's, that does not know the configuration's secrets).
 */
export function withSecrets(inner: Logger, secrets: readonly string[]): Logger {
  const usable = usableSecrets(secrets);
  if (usable.length === 0) return inner;
  const scrub = (msg: string, fields?: Record<string, unknown>) =>
    [
      redact(msg, usable) as string,
      fields && redact(fields, usable) as Record<string, unknown>,
    ] as const;
  return {
    debug: (m, f) => inner.debug(...scrub(m, f)),
    info: (m, f) => inner.info(...scrub(m, f)),
    warn: (m, f) => inner.warn(...scrub(m, f)),
    error: (m, f) => inner.error(...scrub(m, f)),
    with: (fields) =>
      withSecrets(inner.with(redact(fields, usable) as Record<string, unknown>), usable),
  };
}

// Field names whose values are secrets whatever they hold.
const SECRET_KEY =
  /(^|[_-])(api[_-]?key|apikey|authorization|password|passwd|secret|token|cookie)$/i;
// `scheme://user:password@host`: keep the user, hide the password.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*):([^\s@/]+)@/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
// Provider key shapes that can turn up in an error message (OpenAI/Anthropic `sk-...`).
const KEY_SHAPE = /\bsk-[A-Za-z0-9_-]{12,}/g;

function redactText(text: string, secrets: readonly string[]): string {
  return replaceSecrets(text, secrets)
    .replace(URL_CREDENTIALS, `$1:${REDACTED}@`)
    .replace(BEARER, `$1 ${REDACTED}`)
    .replace(KEY_SHAPE, `sk-${REDACTED}`);
}

/** A copy of `value` with secrets replaced (strings, arrays, plain objects; errors as text). */
export function redact(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (value === null || typeof value !== "object") return value;
  if (depth > 8) return "[too deep]";
  if (value instanceof Error) return redactText(String(value), secrets);
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets, depth + 1));
  if (value instanceof Headers) return redact(Object.fromEntries(value), secrets, depth + 1);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) && v !== null && v !== undefined && v !== ""
      ? REDACTED
      : redact(v, secrets, depth + 1);
  }
  return out;
}
