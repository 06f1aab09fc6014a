/**
 * The PostgreSQL store's connection pool (postgres.js): one schema per deployment, selected
 * through the connection's `search_path` so the migrations' SQL stays unqualified; a reconnect
 * that keeps up with a database coming back; and which failures mean the database cannot be
 * reached.
 */
import postgres from "postgres";

/** Where the pool connects and how. */
export interface PoolOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** The schema holding the tables (already checked by `checkSchema`). */
  schema: string;
  /** Pool size. */
  max: number;
  /** Milliseconds allowed to connect. */
  connectTimeoutMs: number;
  /** Told each notice the server sends; ignored without it. */
  onNotice?: (notice: postgres.Notice) => void;
}

/** A query function: the pool, or a transaction. */
export type Query = postgres.Sql | postgres.TransactionSql;

/** Unquoted identifiers only: the schema name goes into `search_path` and a channel name. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Throws unless `schema` is a name the store can use unquoted. */
export function checkSchema(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(
      `invalid PostgreSQL schema name '${schema}': use lowercase letters, digits and '_'`,
    );
  }
}

/** The pool (connections open lazily). */
export function connect(options: PoolOptions): postgres.Sql {
  return postgres(options.url, {
    max: options.max,
    connect_timeout: Math.max(1, Math.ceil(options.connectTimeoutMs / 1000)),
    backoff: reconnectBackoff,
    // `CREATE ... IF NOT EXISTS` notices are expected on every start; keep them off stdout.
    onnotice: options.onNotice ?? (() => {}),
    connection: { search_path: options.schema, application_name: "agentd" },
  });
}

/**
 * Seconds before postgres.js reconnects after a failed connection. Its default grows as 3^n/100 up
 * to 20 s, so after a few failed attempts during an outage the pool (and the LISTEN connection)
 * would stay away for up to 20 s after the database is back; this one stays under half a second.
 */
function reconnectBackoff(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);
}

/**
 * Whether a postgres.js error means the database cannot be reached (down, restarting, refusing
 * connections, out of connections), as opposed to a query it refused.
 */
export function isPostgresOutage(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return false;
  if (error instanceof postgres.PostgresError) {
    // 08: connection exception; 57P0x: shutdown or starting up; 53300: too many connections;
    // 25006: a read-only standby answered (failover under way).
    return code.startsWith("08") || /^57P0[1-3]$/.test(code) || code === "53300" ||
      code === "25006";
  }
  return OUTAGE_CODES.has(code);
}

// Socket and postgres.js connection failures.
const OUTAGE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);
