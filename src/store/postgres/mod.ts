/** The PostgreSQL store: for several replicas sharing one database. */
export {
  cancelChannel,
  isPostgresOutage,
  openPostgresStore,
  PostgresStore,
  type PostgresStoreOptions,
} from "./store.ts";
