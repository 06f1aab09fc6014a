/** The SQLite store: the embedded default. */
export { isSqliteOutage, openSqliteStore, SqliteStore, type SqliteStoreOptions } from "./store.ts";
