/** The PostgreSQL store: for several replicas sharing one database. */
export {
  cancelChannel,
  openPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from "./store.ts";
export { isPostgresOutage } from "./connection.ts";
