/**
 * The PostgreSQL store (`postgres`, i.e. postgres.js), for several replicas. Each deployment (and
 * each test run) lives in its own schema (connection.ts). Writes that check before they write lock
 * the session row first (an `UPDATE` of its `updated_at`), which serialises them per session; the
 * unique indexes are the last word when two sessions race for one run id. A run's boundaries are
 * one statement each, a function of migration 2 (boundaries.ts). The store is assembled here from
 * its parts, one file per kind of record (sessions.ts, messages.ts, runs.ts, chains.ts, leases.ts,
 * checkpoints.ts); this file adds migrating and closing.
 */
import type postgres from "postgres";
import { type Clock, systemClock } from "../../clock.ts";
import {
  type Conversion,
  migrationLabel,
  pendingMigrations,
  SCHEMA_MIGRATIONS_DDL,
} from "../migrations/mod.ts";
import type { Store } from "../types.ts";
import { postgresChains } from "./chains.ts";
import { postgresCheckpoints } from "./checkpoints.ts";
import { checkSchema, connect } from "./connection.ts";
import { postgresLeases } from "./leases.ts";
import { postgresClientGone } from "./client_gone.ts";
import { postgresMessages } from "./messages.ts";
import { postgresRuns } from "./runs.ts";
import { postgresRunSteps } from "./run_steps.ts";
import { postgresSessions } from "./sessions.ts";

/** Options of the PostgreSQL store. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** Schema holding the tables (created when missing); default `public`. */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
  /** The time written into records (default the real time). */
  clock?: Clock;
  /** Milliseconds allowed to connect (default 5000); the store's calls are bounded by it too. */
  connectTimeoutMs?: number;
  /** Told the migrations the opening applied (`0005_durable_run_commits`), none when up to date. */
  onMigrated?: (applied: readonly string[]) => void;
  /**
   * Told each notice the server sends (default: none; tests read the plans `auto_explain` sends
   * as notices).
   */
  onNotice?: (notice: postgres.Notice) => void;
}

/** A store on one schema of a PostgreSQL database. */
export interface PostgresStore extends Store {
  /** Always `postgres`. */
  readonly kind: "postgres";
  /** The schema holding this store's tables. */
  readonly schema: string;
}

/** The NOTIFY channel `cancelRun` signals on; one per schema so deployments stay apart. */
export function cancelChannel(schema: string): string {
  const channel = `agentd_cancel_${schema}`;
  // Channel names are identifiers (at most 63 bytes); a long schema keeps a prefix and a hash.
  if (channel.length <= 63) return channel;
  let hash = 0x811c9dc5;
  for (const char of schema) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return `${channel.slice(0, 54)}_${hash.toString(16).padStart(8, "0")}`;
}

/** Creates the connection pool (connections open lazily); call `migrate()` before use. */
function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const clock = options.clock ?? systemClock;
  const schema = options.schema ?? "public";
  checkSchema(schema);
  const channel = cancelChannel(schema);
  const sql = connect({
    url: options.url,
    schema,
    max: options.max ?? 10,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    onNotice: options.onNotice,
  });
  const unlisteners = new Set<() => Promise<void>>();

  return {
    kind: "postgres",
    schema,
    ...postgresSessions(sql, clock),
    ...postgresMessages(sql, clock),
    ...postgresRuns(sql, clock, channel),
    ...postgresRunSteps(sql),
    ...postgresChains(sql),
    ...postgresLeases(sql, clock, channel, unlisteners),
    ...postgresClientGone(sql, clock, channel),
    ...postgresCheckpoints(sql),

    async migrate() {
      const done: string[] = [];
      await sql.begin(async (tx) => {
        // The advisory lock serialises concurrent starts, including `CREATE SCHEMA IF NOT
        // EXISTS`, which is not safe on its own when two sessions race; it is released at commit.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`agentd_migrate:${schema}`}))`;
        await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await tx.unsafe(SCHEMA_MIGRATIONS_DDL);
        const applied = await tx`SELECT version FROM schema_migrations`;
        for (const migration of pendingMigrations(applied.map((r) => Number(r.version)))) {
          for (const statement of migration.postgres) await tx.unsafe(statement);
          if (migration.convert) await convert(tx, migration.convert);
          await tx`INSERT INTO schema_migrations (version, name, applied_at)
            VALUES (${migration.version}, ${migration.name}, ${clock.now()})`;
          done.push(migrationLabel(migration));
        }
      });
      return done;
    },

    async ping() {
      await sql`SELECT 1`;
    },

    async close() {
      // Unlisten first: postgres.js re-subscribes a listener whose connection closes.
      await Promise.allSettled([...unlisteners].map((unlisten) => unlisten()));
      unlisteners.clear();
      await sql.end({ timeout: 5 });
    },
  };
}

/** Drives a conversion inside the migration's transaction (`?` placeholders become `$n`). */
async function convert(tx: postgres.TransactionSql, conversion: Conversion): Promise<void> {
  const steps = conversion("postgres");
  let next = steps.next([]);
  while (!next.done) {
    let n = 0;
    const sql = next.value.sql.replace(/\?/g, () => `$${++n}`);
    // deno-lint-ignore no-explicit-any
    const rows = await tx.unsafe(sql, next.value.params as any[]);
    next = steps.next([...rows]);
  }
}

/** Connects to PostgreSQL, creates the schema when missing and runs the migrations. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = postgresStore(options);
  try {
    // Not `onMigrated?.(await ...)`: an optional call skips evaluating its arguments.
    const applied = await store.migrate();
    options.onMigrated?.(applied);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
