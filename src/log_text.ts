/**
 * The log line for people: `14:03:07.412 INFO  request POST /v1/runs 201 12.3ms tenant=default`.
 * Time of day, the level, the message, then the record's fields as `key=value`, with the fields
 * every line has (request, trace and span ids) left out and a request line said as a request.
 * Colours (level, dim keys) only when asked, i.e. when stderr is a terminal without `NO_COLOR`.
 */

/** How one record becomes text. */
export interface TextFormat {
  /** ANSI colours on. */
  colour: boolean;
}

// Fields that every line of a request carries: noise for a person watching the terminal.
const HIDDEN = new Set(["time", "level", "msg", "request_id", "trace_id", "span_id"]);
// The request line's own fields, said in its message.
const REQUEST_FIELDS = new Set(["method", "path", "status", "ms"]);

const RESET = "\x1b[0m";
const DIM = "\x1b[2m";
const BOLD = "\x1b[1m";
const LEVEL_COLOUR: Record<string, string> = {
  debug: "\x1b[90m",
  info: "\x1b[36m",
  warn: "\x1b[33m",
  error: "\x1b[31m",
};

/** Formats one (already scrubbed) record as a single line. */
export function formatText(record: Record<string, unknown>, format: TextFormat): string {
  const paint = (code: string, text: string) => format.colour ? `${code}${text}${RESET}` : text;
  const level = String(record.level ?? "info");
  const time = timeOfDay(record.time);
  const label = paint(LEVEL_COLOUR[level] ?? "", level.toUpperCase().padEnd(5));
  let message = String(record.msg ?? "");
  let skip = HIDDEN;
  if (typeof record.method === "string" && typeof record.path === "string") {
    const status = typeof record.status === "number" ? ` ${statusText(record.status, paint)}` : "";
    const ms = typeof record.ms === "number" ? ` ${record.ms}ms` : "";
    message = `${message} ${record.method} ${record.path}${status}${ms}`;
    skip = new Set([...HIDDEN, ...REQUEST_FIELDS]);
  }
  const fields = Object.entries(record)
    .filter(([key, value]) => !skip.has(key) && value !== undefined)
    .map(([key, value]) => `${paint(DIM, `${key}=`)}${valueText(value)}`);
  const text = [paint(DIM, time), label, paint(BOLD, message), ...fields].join(" ");
  // One record, one line: a newline inside a value would break the line format.
  return text.replace(/\r?\n/g, "\\n");
}

function timeOfDay(time: unknown): string {
  const date = typeof time === "string" ? new Date(time) : new Date();
  if (Number.isNaN(date.getTime())) return String(time);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${
    pad(date.getMilliseconds(), 3)
  }`;
}

function statusText(status: number, paint: (code: string, text: string) => string): string {
  const colour = status >= 500 ? LEVEL_COLOUR.error : status >= 400 ? LEVEL_COLOUR.warn : "";
  return colour ? paint(colour, String(status)) : String(status);
}

/** A value as a person reads it: bare when it is one word, JSON otherwise. */
function valueText(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value === null || typeof value !== "object") return String(value);
  if (
    Array.isArray(value) && value.length > 0 &&
    value.every((v) => typeof v === "string" && /^[^\s,]+$/.test(v))
  ) {
    return value.join(",");
  }
  return JSON.stringify(value);
}
