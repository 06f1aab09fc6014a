/**
 * The SQLite store's one `node:sqlite` connection: opened with the pragmas the store relies on,
 * each statement prepared once and kept. Statements run synchronously, so no other call of this
 * process interleaves with an open transaction.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";

/** A row as `node:sqlite` returns it. */
export type Row = Record<string, SQLInputValue>;

/** A connection to one database file (or an in-memory database) and its prepared statements. */
export class Connection {
  /** The database handle, for what is not a cached statement (pragmas, migrations, closing). */
  readonly db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  /**
   * Opens (and creates) the database at `path`, a file (its directory is created) or `:memory:`;
   * a statement waits `busyTimeoutMs` for another process's lock.
   */
  constructor(path: string, busyTimeoutMs: number) {
    const memory = path === ":memory:";
    if (!memory) mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    // The busy timeout first: switching to WAL itself needs a lock another process may hold.
    this.db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    if (!memory) this.db.exec("PRAGMA journal_mode = WAL");
    // WAL makes NORMAL durable against application crashes; only power loss may drop the tail.
    this.db.exec("PRAGMA synchronous = NORMAL");
    // Each write of a group commit runs in a savepoint, whose undo pages go to a sub-journal: in
    // memory (it only holds the pages one turn's writes touch) rather than a temporary file.
    this.db.exec("PRAGMA temp_store = MEMORY");
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Every row `sql` returns. */
  all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.#statement(sql).all(...params) as Row[];
  }

  /** The first row `sql` returns, if any. */
  get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.#statement(sql).get(...params) as Row | undefined;
  }

  /** Runs `sql`; returns the number of rows it changed. */
  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.#statement(sql).run(...params).changes);
  }

  /** Drops the prepared statements (they may name tables a migration rebuilt, or a closed db). */
  forget(): void {
    this.#statements.clear();
  }
}

/**
 * Runs synchronous `body` so that a throw becomes a rejected promise, as callers of a Store
 * expect.
 */
export function attempt<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (error) {
    return Promise.reject(error);
  }
}
