/** The SQLite store: the embedded default. */
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from "./store.ts";
