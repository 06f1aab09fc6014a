/** The SQLite store: the embedded default. */
export {
  isSqliteOutage,
  openSqliteStore,
  type SqliteStore,
  type SqliteStoreOptions,
} from "./store.ts";
