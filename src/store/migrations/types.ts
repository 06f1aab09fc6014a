/** The shape of one versioned migration. */

/** One schema version: its statements per dialect, applied in order inside one transaction. */
export interface Migration {
  /** Strictly increasing; recorded in `schema_migrations` once applied. */
  version: number;
  /** A short label for people reading `schema_migrations`. */
  name: string;
  /** Statements for SQLite (`node:sqlite`). */
  sqlite: string[];
  /** Statements for PostgreSQL (unqualified: the connection's `search_path` picks the schema). */
  postgres: string[];
}
