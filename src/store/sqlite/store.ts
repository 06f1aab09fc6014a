/**
 * The SQLite store (`node:sqlite`), the embedded default. Several processes may share one file
 * (the run service polls it), so the database runs in WAL mode with a busy timeout, and every
 * write that checks before it writes holds `BEGIN IMMEDIATE` (group_commit.ts): the write lock is
 * taken up front, so no other process can slip in between the check and the write. The store is
 * assembled here from its parts, one file per kind of record (sessions.ts, messages.ts, runs.ts,
 * chains.ts, leases.ts, checkpoints.ts); this file adds opening, migrating and closing.
 */
import type { SQLInputValue } from "node:sqlite";
import { type Clock, systemClock } from "../../clock.ts";
import {
  type Conversion,
  migrationLabel,
  pendingMigrations,
  SCHEMA_MIGRATIONS_DDL,
} from "../migrations/mod.ts";
import type { Store } from "../types.ts";
import { sqliteChains } from "./chains.ts";
import { type Checkpointer, startCheckpointer } from "./checkpointer.ts";
import { sqliteCheckpoints } from "./checkpoints.ts";
import { attempt, Connection, type Row } from "./connection.ts";
import { GroupCommit } from "./group_commit.ts";
import { sqliteLeases } from "./leases.ts";
import { sqliteClientGone } from "./client_gone.ts";
import { sqliteMessages } from "./messages.ts";
import { sqliteRuns } from "./runs.ts";
import { sqliteRunSteps } from "./run_steps.ts";
import { sqliteSessions } from "./sessions.ts";

/**
 * Whether a `node:sqlite` error means the database cannot be used right now (locked by another
 * process past the busy timeout, an I/O error, a full disk, a file that cannot be opened).
 */
export function isSqliteOutage(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown })?.errcode;
  // The primary result code is the low byte (extended codes add detail above it).
  return typeof errcode === "number" && SQLITE_OUTAGE.has(errcode & 0xff);
}

// SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN.
const SQLITE_OUTAGE = new Set([5, 6, 10, 13, 14]);

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** A file path (its directory is created) or `:memory:`. */
  path: string;
  /** How long a statement waits for another process's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** The time written into records (default the real time). */
  clock?: Clock;
  /** Told the migrations the opening applied (`0005_durable_run_commits`), none when up to date. */
  onMigrated?: (applied: readonly string[]) => void;
  /**
   * When the checkpoint worker of a file starts: a second after this resolves (a server resolves
   * it once listening, so the worker's start stays off the first requests), at once without it.
   */
  background?: Promise<void>;
}

/** A store on one SQLite database file (or an in-memory database). */
export interface SqliteStore extends Store {
  /** Always `sqlite`. */
  readonly kind: "sqlite";
  /**
   * Hands WAL checkpoints to a worker thread (see checkpointer.ts): this connection stops running
   * them inside its commits. Without a worker, SQLite's own checkpoints stay on. With `after`, the
   * worker starts `CHECKPOINTER_DELAY_MS` after it resolves, unless the store is closed by then.
   */
  startCheckpointer(path: string, busyTimeoutMs: number, after?: Promise<void>): Promise<void>;
}

/** How often the checkpoint worker folds the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * How long after `background` the worker starts: `new Worker` holds this thread ~10 ms, which
 * would land on the first requests of a cold start (a poller's `/healthz`, the first run).
 */
const CHECKPOINTER_DELAY_MS = 1000;

/** Opens (and creates) the database; call `migrate()` before use. */
function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  const clock = options.clock ?? systemClock;
  const conn = new Connection(options.path, Math.max(0, options.busyTimeoutMs ?? 5000));
  const commits = new GroupCommit(conn);
  let checkpointer: Checkpointer | null = null;
  let starting: Promise<void> | undefined;
  let delay: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  /** Drives a conversion synchronously: the write lock is held, nothing may await. */
  const convert = (conversion: Conversion): void => {
    const steps = conversion("sqlite");
    let next = steps.next([]);
    while (!next.done) {
      const rows = conn.db.prepare(next.value.sql).all(...next.value.params as SQLInputValue[]);
      next = steps.next(rows as Row[]);
    }
  };

  return {
    kind: "sqlite",
    ...sqliteSessions(conn, commits, clock),
    ...sqliteMessages(conn, commits, clock),
    ...sqliteRuns(conn, commits, clock),
    ...sqliteRunSteps(conn, commits),
    ...sqliteChains(conn),
    ...sqliteLeases(conn, commits, clock),
    ...sqliteClientGone(conn, commits, clock),
    ...sqliteCheckpoints(conn),

    async migrate() {
      const done: string[] = [];
      await commits.durable(() => {
        // IMMEDIATE: a second process migrating the same file waits here, then sees the versions
        // the first one recorded and applies nothing.
        commits.write(() => {
          conn.db.exec(SCHEMA_MIGRATIONS_DDL);
          const applied = conn.db.prepare("SELECT version FROM schema_migrations").all()
            .map((r) => r.version as number);
          for (const migration of pendingMigrations(applied)) {
            for (const statement of migration.sqlite) conn.db.exec(statement);
            if (migration.convert) convert(migration.convert);
            conn.db.prepare(
              "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            )
              .run(migration.version, migration.name, clock.now());
            done.push(migrationLabel(migration));
          }
        });
        // Statements prepared before a migration may name tables it rebuilt.
        conn.forget();
      });
      return done;
    },

    ping() {
      return attempt(() => {
        conn.get("SELECT 1 AS one");
      });
    },

    startCheckpointer(path, busyTimeoutMs, after) {
      // Closed before the worker was asked for (a deferred start): none starts.
      if (closed) return starting ?? Promise.resolve();
      if (after) {
        return after.then(() =>
          new Promise<void>((resolve) => {
            if (closed) return resolve();
            delay = setTimeout(
              () => resolve(this.startCheckpointer(path, busyTimeoutMs)),
              CHECKPOINTER_DELAY_MS,
            );
          })
        );
      }
      return starting ??= (async () => {
        const started = await startCheckpointer({
          path,
          intervalMs: CHECKPOINT_INTERVAL_MS,
          busyTimeoutMs,
          onFailure: () => {
            checkpointer = null;
            if (conn.db.isOpen) conn.db.exec("PRAGMA wal_autocheckpoint = 1000");
          },
        });
        if (!started) return;
        // Closed while the worker started: it goes at once.
        if (closed) return await started.stop();
        checkpointer = started;
        conn.db.exec("PRAGMA wal_autocheckpoint = 0");
      })();
    },

    async close() {
      commits.flush();
      closed = true;
      clearTimeout(delay);
      await starting?.catch(() => {});
      const stopping = checkpointer;
      checkpointer = null;
      await stopping?.stop();
      if (!conn.db.isOpen) return;
      conn.forget();
      conn.db.close();
    },
  };
}

/**
 * Opens a SQLite store at `path` (a file or `:memory:`), runs the migrations and, for a file,
 * starts its checkpoint worker without waiting for it (a new isolate that loads its module and
 * opens the file), a second after `options.background` resolves when given; until it runs,
 * SQLite's own checkpoints stay on.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const store = sqliteStore(options);
  try {
    // Not `onMigrated?.(await ...)`: an optional call skips evaluating its arguments.
    const applied = await store.migrate();
    options.onMigrated?.(applied);
    if (options.path !== ":memory:") {
      const busyTimeoutMs = Math.max(0, options.busyTimeoutMs ?? 5000);
      store.startCheckpointer(options.path, busyTimeoutMs, options.background).catch(() => {});
    }
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
