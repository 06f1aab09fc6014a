/** The shape of one versioned migration. */

/** One statement of a conversion, with `?` placeholders in both dialects. */
export interface MigrationQuery {
  /** The SQL to run. */
  sql: string;
  /** Its parameters. */
  params: unknown[];
}

/**
 * A conversion of existing rows, written once for both dialects: a generator that yields its
 * statements and receives each one's rows (JSON columns as stored: text in SQLite, decoded in
 * PostgreSQL). Each store drives it: SQLite synchronously (it must not yield to the event loop
 * while it holds the write lock), PostgreSQL awaiting every statement.
 */
export type Conversion = (
  dialect: "sqlite" | "postgres",
) => Generator<MigrationQuery, void, Record<string, unknown>[]>;

/**
 * One schema version: its statements per dialect, then an optional conversion of existing data,
 * applied in order inside one transaction.
 */
export interface Migration {
  /** Strictly increasing; recorded in `schema_migrations` once applied. */
  version: number;
  /** A short label for people reading `schema_migrations`. */
  name: string;
  /** Statements for SQLite (`node:sqlite`). */
  sqlite: string[];
  /** Statements for PostgreSQL (unqualified: the connection's `search_path` picks the schema). */
  postgres: string[];
  /** Rewrites existing rows after the statements (data a statement alone cannot convert). */
  convert?: Conversion;
}
