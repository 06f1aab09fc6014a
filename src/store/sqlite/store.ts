/**
 * The SQLite store (`node:sqlite`), the embedded default. Several processes may share one file
 * (the run service polls it), so the database runs in WAL mode with a busy timeout, and every
 * write that checks before it writes holds `BEGIN IMMEDIATE`: the write lock is taken up front,
 * so no other process can slip in between the check and the write. Statements run synchronously,
 * so no other call of this process interleaves with an open transaction either.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type {
  Checkpoint,
  Message,
  MessageInput,
  Page,
  Run,
  RunStatus,
  Session,
} from "../../api/schemas.ts";
import { type Clock, systemClock } from "../../clock.ts";
import { errors } from "../errors.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { pendingMigrations, SCHEMA_MIGRATIONS_DDL } from "../migrations/mod.ts";
import {
  type CheckpointRow,
  type MessageRow,
  newMessageRows,
  replicaLostMessagePrefix,
  restoredMessageRows,
  type RunRow,
  type SessionRow,
  toCheckpoint,
  toMessage,
  toRun,
  toSession,
} from "../records.ts";
import type {
  LostRun,
  NewCheckpoint,
  NewRun,
  PageQuery,
  RunFilter,
  RunOutcome,
  Store,
} from "../types.ts";

/** Options of the SQLite store. */
export interface SqliteStoreOptions {
  /** A file path (its directory is created) or `:memory:`. */
  path: string;
  /** How long a statement waits for another process's lock, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** The time written into records (default the real time). */
  clock?: Clock;
}

type Row = Record<string, SQLInputValue>;

const RUN_COLUMNS =
  "seq, run_id, session_id, tenant_id, status, parent_checkpoint_id, checkpoint_id, result, " +
  "interrupt_payload, error, created_at, updated_at";
const MESSAGE_COLUMNS =
  "seq, message_id, session_id, run_id, role, content, tool_calls, tool_call_id, created_at";
const CHECKPOINT_COLUMNS =
  "seq, checkpoint_id, session_id, run_id, parent_id, step, state, created_at";
const SESSION_COLUMNS = "seq, session_id, metadata, created_at, updated_at";

/** JSON text for a TEXT column; SQL NULL for null or undefined. */
function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** The decoded value of a JSON TEXT column. */
function parse(value: SQLInputValue): unknown {
  return typeof value === "string" ? JSON.parse(value) : null;
}

function sessionRow(r: Row): SessionRow {
  return {
    seq: r.seq as number,
    session_id: r.session_id as string,
    metadata: parse(r.metadata),
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
  };
}

function messageRow(r: Row): MessageRow {
  return {
    seq: r.seq as number,
    message_id: r.message_id as string,
    session_id: r.session_id as string,
    run_id: r.run_id as string | null,
    role: r.role as string,
    content: parse(r.content),
    tool_calls: parse(r.tool_calls),
    tool_call_id: r.tool_call_id as string | null,
    created_at: r.created_at as number,
  };
}

function runRow(r: Row): RunRow {
  return {
    seq: r.seq as number,
    run_id: r.run_id as string,
    session_id: r.session_id as string,
    tenant_id: r.tenant_id as string,
    status: r.status as string,
    parent_checkpoint_id: r.parent_checkpoint_id as string | null,
    checkpoint_id: r.checkpoint_id as string | null,
    result: parse(r.result),
    interrupt_payload: parse(r.interrupt_payload),
    error: parse(r.error),
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
  };
}

function checkpointRow(r: Row): CheckpointRow {
  return {
    seq: r.seq as number,
    checkpoint_id: r.checkpoint_id as string,
    session_id: r.session_id as string,
    run_id: r.run_id as string | null,
    parent_id: r.parent_id as string | null,
    step: r.step as number,
    state: parse(r.state),
    created_at: r.created_at as number,
  };
}

/** Runs synchronous `body` so that a throw becomes a rejected promise, as callers of a Store expect. */
function attempt<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A store on one SQLite database file (or an in-memory database). */
export class SqliteStore implements Store {
  /** Always `sqlite`. */
  readonly kind = "sqlite" as const;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  readonly #clock: Clock;

  /** Opens (and creates) the database; call `migrate()` before use. */
  constructor(options: SqliteStoreOptions) {
    this.#clock = options.clock ?? systemClock;
    const memory = options.path === ":memory:";
    if (!memory) mkdirSync(dirname(options.path), { recursive: true });
    this.#db = new DatabaseSync(options.path);
    // The busy timeout first: switching to WAL itself needs a lock another process may hold.
    this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, options.busyTimeoutMs ?? 5000)}`);
    if (!memory) this.#db.exec("PRAGMA journal_mode = WAL");
    // WAL makes NORMAL durable against application crashes; only power loss may drop the tail.
    this.#db.exec("PRAGMA synchronous = NORMAL");
  }

  #stmt(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.#stmt(sql).all(...params) as Row[];
  }

  #get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.#stmt(sql).get(...params) as Row | undefined;
  }

  #run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.#stmt(sql).run(...params).changes);
  }

  /** Runs `body` in a write transaction that holds the database's write lock from its start. */
  #write<T>(body: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const result = body();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Bumps the session's `updated_at`; false when the tenant has no such session. */
  #touchSession(tenant: string, sessionId: string, now: number): boolean {
    return this.#run(
      "UPDATE sessions SET updated_at = ? WHERE tenant_id = ? AND session_id = ?",
      now,
      tenant,
      sessionId,
    ) > 0;
  }

  #requireSession(tenant: string, sessionId: string): void {
    const found = this.#get(
      "SELECT 1 AS found FROM sessions WHERE tenant_id = ? AND session_id = ?",
      tenant,
      sessionId,
    );
    if (!found) throw errors.sessionNotFound(sessionId);
  }

  /**
   * Throws 409003 when a run other than `runId` is running in the session: its conversation must
   * not change under that run. Called inside the write transaction, so no run can start between
   * this check and the write.
   */
  #requireIdle(tenant: string, sessionId: string, runId: string | null): void {
    const running = this.#get(
      `SELECT 1 AS found FROM runs WHERE tenant_id = ? AND session_id = ? AND status = 'running'
       AND run_id IS NOT ?`,
      tenant,
      sessionId,
      runId,
    );
    if (running) throw errors.sessionBusy(sessionId);
  }

  #runById(runId: string): Row | undefined {
    return this.#get(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`, runId);
  }

  migrate(): Promise<void> {
    return attempt(() => {
      // IMMEDIATE: a second process migrating the same file waits here, then sees the versions
      // the first one recorded and applies nothing.
      this.#write(() => {
        this.#db.exec(SCHEMA_MIGRATIONS_DDL);
        const applied = this.#db.prepare("SELECT version FROM schema_migrations").all()
          .map((r) => r.version as number);
        for (const migration of pendingMigrations(applied)) {
          for (const statement of migration.sqlite) this.#db.exec(statement);
          this.#db.prepare(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
          )
            .run(migration.version, migration.name, this.#clock.now());
        }
      });
    });
  }

  ping(): Promise<void> {
    return attempt(() => {
      this.#get("SELECT 1 AS one");
    });
  }

  close(): Promise<void> {
    return attempt(() => {
      if (!this.#db.isOpen) return;
      this.#statements.clear();
      this.#db.close();
    });
  }

  // Sessions

  createSession(
    tenant: string,
    input: { session_id?: string | null; metadata?: Record<string, unknown> | null },
  ): Promise<Session> {
    return attempt(() => {
      const id = input.session_id ?? crypto.randomUUID();
      const now = this.#clock.now();
      const row = this.#get(
        `INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${SESSION_COLUMNS}`,
        tenant,
        id,
        JSON.stringify(input.metadata ?? {}),
        now,
        now,
      );
      if (!row) throw errors.sessionExists(id);
      return toSession(sessionRow(row));
    });
  }

  getSession(tenant: string, sessionId: string): Promise<Session | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND session_id = ?`,
        tenant,
        sessionId,
      );
      return row ? toSession(sessionRow(row)) : null;
    });
  }

  listSessions(tenant: string, page: PageQuery): Promise<Page<Session>> {
    return attempt(() => {
      const { after, limit } = pageWindow(page);
      const rows = this.#all(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND seq > ?
         ORDER BY seq LIMIT ?`,
        tenant,
        after,
        limit,
      ).map(sessionRow);
      const count = this.#get("SELECT count(*) AS n FROM sessions WHERE tenant_id = ?", tenant)!;
      return toPage(rows, page.per_page, count.n as number, toSession);
    });
  }

  deleteSession(tenant: string, sessionId: string): Promise<void> {
    return attempt(() => {
      this.#write(() => {
        this.#requireSession(tenant, sessionId);
        this.#requireIdle(tenant, sessionId, null);
        for (const table of ["messages", "checkpoints", "runs", "sessions"]) {
          this.#run(
            `DELETE FROM ${table} WHERE tenant_id = ? AND session_id = ?`,
            tenant,
            sessionId,
          );
        }
      });
    });
  }

  // Messages

  #insertMessages(tenant: string, rows: Omit<MessageRow, "seq">[]): void {
    for (const m of rows) {
      this.#run(
        `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content,
         tool_calls, tool_call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        tenant,
        m.session_id,
        m.message_id,
        m.run_id,
        m.role,
        JSON.stringify(m.content),
        json(m.tool_calls),
        m.tool_call_id,
        m.created_at,
      );
    }
  }

  appendMessages(
    tenant: string,
    sessionId: string,
    messages: MessageInput[],
    runId?: string | null,
  ): Promise<Message[]> {
    return attempt(() => {
      const now = this.#clock.now();
      const rows = newMessageRows(sessionId, messages, runId ?? null, now);
      this.#write(() => {
        if (!this.#touchSession(tenant, sessionId, now)) throw errors.sessionNotFound(sessionId);
        this.#requireIdle(tenant, sessionId, runId ?? null);
        for (const m of rows) {
          const taken = this.#get(
            `SELECT 1 AS found FROM messages
             WHERE tenant_id = ? AND session_id = ? AND message_id = ?`,
            tenant,
            sessionId,
            m.message_id,
          );
          if (taken) throw errors.messageExists(m.message_id);
        }
        this.#insertMessages(tenant, rows);
      });
      return rows.map((m) => toMessage({ ...m, seq: 0 }));
    });
  }

  listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>> {
    return attempt(() => {
      const { after, limit } = pageWindow(page);
      this.#requireSession(tenant, sessionId);
      const rows = this.#all(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE tenant_id = ? AND session_id = ? AND seq > ?
         ORDER BY seq LIMIT ?`,
        tenant,
        sessionId,
        after,
        limit,
      ).map(messageRow);
      const count = this.#get(
        "SELECT count(*) AS n FROM messages WHERE tenant_id = ? AND session_id = ?",
        tenant,
        sessionId,
      )!;
      return toPage(rows, page.per_page, count.n as number, toMessage);
    });
  }

  allMessages(tenant: string, sessionId: string): Promise<Message[]> {
    return attempt(() => {
      return this.#all(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE tenant_id = ? AND session_id = ?
         ORDER BY seq`,
        tenant,
        sessionId,
      ).map((r) => toMessage(messageRow(r)));
    });
  }

  getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${MESSAGE_COLUMNS} FROM messages
         WHERE tenant_id = ? AND session_id = ? AND message_id = ?`,
        tenant,
        sessionId,
        messageId,
      );
      return row ? toMessage(messageRow(row)) : null;
    });
  }

  deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean> {
    return attempt(() => {
      return this.#write(() => {
        this.#requireSession(tenant, sessionId);
        this.#requireIdle(tenant, sessionId, null);
        const deleted = this.#run(
          "DELETE FROM messages WHERE tenant_id = ? AND session_id = ? AND message_id = ?",
          tenant,
          sessionId,
          messageId,
        ) > 0;
        if (deleted) this.#touchSession(tenant, sessionId, this.#clock.now());
        return deleted;
      });
    });
  }

  replaceMessages(tenant: string, sessionId: string, messages: Message[]): Promise<void> {
    return attempt(() => {
      const now = this.#clock.now();
      const rows = restoredMessageRows(sessionId, messages, now);
      this.#write(() => {
        if (!this.#touchSession(tenant, sessionId, now)) throw errors.sessionNotFound(sessionId);
        // Deleting everything and inserting the list gives the kept rows fresh `seq` values in list
        // order, so the conversation order follows the list even where it differs from the old one.
        this.#run("DELETE FROM messages WHERE tenant_id = ? AND session_id = ?", tenant, sessionId);
        this.#insertMessages(tenant, rows);
      });
    });
  }

  // Runs

  createRun(tenant: string, run: NewRun): Promise<Run> {
    return attempt(() => {
      const now = this.#clock.now();
      const row = this.#write(() => {
        if (run.create_session) {
          this.#run(
            `INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
             VALUES (?, ?, '{}', ?, ?) ON CONFLICT DO NOTHING`,
            tenant,
            run.session_id,
            now,
            now,
          );
        }
        if (!this.#touchSession(tenant, run.session_id, now)) {
          throw errors.sessionNotFound(run.session_id);
        }
        // Run ids are global: another tenant's run with this id is a conflict too.
        if (this.#get("SELECT 1 AS found FROM runs WHERE run_id = ?", run.run_id)) {
          throw errors.runExists(run.run_id);
        }
        try {
          return this.#get(
            `INSERT INTO runs (run_id, tenant_id, session_id, status, parent_checkpoint_id, owner,
             heartbeat_at, created_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?)
             RETURNING ${RUN_COLUMNS}`,
            run.run_id,
            tenant,
            run.session_id,
            run.parent_checkpoint_id,
            run.owner,
            now,
            now,
            now,
          )!;
        } catch (error) {
          // The partial unique index `runs_one_running` is the only other unique key left.
          if (String((error as Error).message).includes("UNIQUE constraint failed")) {
            throw errors.sessionBusy(run.session_id);
          }
          throw error;
        }
      });
      return toRun(runRow(row));
    });
  }

  getRun(tenant: string, runId: string): Promise<Run | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = ? AND run_id = ?`,
        tenant,
        runId,
      );
      return row ? toRun(runRow(row)) : null;
    });
  }

  listRuns(
    tenant: string,
    sessionId: string,
    filter: RunFilter,
    page: PageQuery,
  ): Promise<Page<Run>> {
    return attempt(() => {
      const { after, limit } = pageWindow(page);
      this.#requireSession(tenant, sessionId);
      const where = ["tenant_id = ?", "session_id = ?"];
      const params: SQLInputValue[] = [tenant, sessionId];
      // Lists travel as one JSON parameter, so the statement text does not depend on their length.
      const lists: [string, string[] | undefined][] = [
        ["run_id", filter.ids],
        ["session_id", filter.session_ids],
        ["status", filter.statuses],
      ];
      for (const [column, values] of lists) {
        if (values && values.length > 0) {
          where.push(`${column} IN (SELECT value FROM json_each(?))`);
          params.push(JSON.stringify(values));
        }
      }
      const bounds: [string, number | undefined][] = [
        ["created_at <", filter.created_before],
        ["created_at >", filter.created_after],
        ["updated_at <", filter.updated_before],
        ["updated_at >", filter.updated_after],
      ];
      for (const [condition, value] of bounds) {
        if (value !== undefined) {
          where.push(`${condition} ?`);
          params.push(value);
        }
      }
      const clause = where.join(" AND ");
      const rows = this.#all(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE ${clause} AND seq > ? ORDER BY seq LIMIT ?`,
        ...params,
        after,
        limit,
      ).map(runRow);
      const count = this.#get(`SELECT count(*) AS n FROM runs WHERE ${clause}`, ...params)!;
      return toPage(rows, page.per_page, count.n as number, toRun);
    });
  }

  finishRun(runId: string, outcome: RunOutcome): Promise<Run> {
    return attempt(() => {
      const row = this.#write(() =>
        this.#get(
          `UPDATE runs SET status = ?, result = ?, interrupt_payload = ?, error = ?, updated_at = ?
           WHERE run_id = ? AND status = 'running' RETURNING ${RUN_COLUMNS}`,
          outcome.status,
          json(outcome.result),
          json(outcome.interrupt_payload),
          json(outcome.error),
          this.#clock.now(),
          runId,
        ) ?? this.#runById(runId)
      );
      if (!row) throw errors.runNotFound(runId);
      return toRun(runRow(row));
    });
  }

  cancelRun(tenant: string, runId: string): Promise<Run | null> {
    return attempt(() => {
      const row = this.#write(() =>
        this.#get(
          `UPDATE runs SET status = 'cancelled', updated_at = ?
           WHERE tenant_id = ? AND run_id = ? AND status = 'running' RETURNING ${RUN_COLUMNS}`,
          this.#clock.now(),
          tenant,
          runId,
        ) ?? this.#get(
          `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = ? AND run_id = ?`,
          tenant,
          runId,
        )
      );
      return row ? toRun(runRow(row)) : null;
    });
  }

  watchCancellations(_listener: (runId: string) => void): Promise<() => Promise<void>> {
    return attempt(() => {
      // SQLite cannot push; the run service polls `runStatuses` instead.
      return async () => {};
    });
  }

  runStatuses(runIds: string[]): Promise<Map<string, RunStatus>> {
    return attempt(() => {
      const statuses = new Map<string, RunStatus>();
      if (runIds.length === 0) return statuses;
      const rows = this.#all(
        "SELECT run_id, status FROM runs WHERE run_id IN (SELECT value FROM json_each(?))",
        JSON.stringify(runIds),
      );
      for (const r of rows) statuses.set(r.run_id as string, r.status as RunStatus);
      return statuses;
    });
  }

  heartbeat(owner: string, runIds: string[]): Promise<void> {
    return attempt(() => {
      if (runIds.length === 0) return;
      this.#run(
        `UPDATE runs SET owner = ?, heartbeat_at = ?
         WHERE status = 'running' AND run_id IN (SELECT value FROM json_each(?))`,
        owner,
        this.#clock.now(),
        JSON.stringify(runIds),
      );
    });
  }

  sweepLostRuns(now: number, leaseMs: number): Promise<LostRun[]> {
    return attempt(() => {
      // One UPDATE ... RETURNING under the write lock: a run moves out of `running` exactly once,
      // so of two sweepers (threads or processes) only one reports it.
      const rows = this.#write(() =>
        this.#all(
          `UPDATE runs SET status = 'interrupted', updated_at = ?,
           error = json_object('code', 'replica_lost', 'message', ? || owner || ')')
           WHERE status = 'running' AND heartbeat_at < ?
           RETURNING tenant_id, run_id, session_id, owner`,
          this.#clock.now(),
          replicaLostMessagePrefix(),
          now - leaseMs,
        )
      );
      return rows.map((r) => ({
        tenant_id: r.tenant_id as string,
        run_id: r.run_id as string,
        session_id: r.session_id as string,
        owner: r.owner as string,
      }));
    });
  }

  // Checkpoints

  addCheckpoint(tenant: string, checkpoint: NewCheckpoint): Promise<Checkpoint> {
    return attempt(() => {
      const row = this.#write(() => {
        this.#requireSession(tenant, checkpoint.session_id);
        const now = this.#clock.now();
        const inserted = this.#get(
          `INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id, run_id, parent_id, step,
           state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${CHECKPOINT_COLUMNS}`,
          crypto.randomUUID(),
          tenant,
          checkpoint.session_id,
          checkpoint.run_id,
          checkpoint.parent_id,
          checkpoint.state.step,
          JSON.stringify(checkpoint.state),
          now,
        )!;
        if (checkpoint.run_id !== null) {
          this.#run(
            "UPDATE runs SET checkpoint_id = ?, updated_at = ? WHERE run_id = ? AND tenant_id = ?",
            inserted.checkpoint_id as string,
            now,
            checkpoint.run_id,
            tenant,
          );
        }
        return inserted;
      });
      return toCheckpoint(checkpointRow(row));
    });
  }

  getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
         WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?`,
        tenant,
        sessionId,
        checkpointId,
      );
      return row ? toCheckpoint(checkpointRow(row)) : null;
    });
  }

  latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ? AND session_id = ?
         ORDER BY seq DESC LIMIT 1`,
        tenant,
        sessionId,
      );
      return row ? toCheckpoint(checkpointRow(row)) : null;
    });
  }

  listCheckpoints(
    tenant: string,
    sessionId: string,
    page: PageQuery,
  ): Promise<Page<Checkpoint>> {
    return attempt(() => {
      const { after, limit } = pageWindow(page);
      this.#requireSession(tenant, sessionId);
      const rows = this.#all(
        `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
         WHERE tenant_id = ? AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
        tenant,
        sessionId,
        after,
        limit,
      ).map(checkpointRow);
      const count = this.#get(
        "SELECT count(*) AS n FROM checkpoints WHERE tenant_id = ? AND session_id = ?",
        tenant,
        sessionId,
      )!;
      return toPage(rows, page.per_page, count.n as number, toCheckpoint);
    });
  }
}

/** Opens a SQLite store at `path` (a file or `:memory:`) and runs the migrations. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const store = new SqliteStore(options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
