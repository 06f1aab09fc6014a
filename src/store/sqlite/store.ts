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
import { setImmediate } from "node:timers";
import { type Checkpointer, startCheckpointer } from "./checkpointer.ts";
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
import { ConversationChanged, storeErrors } from "../errors.ts";
import { cutPage, decodeRecentCursor, pageWindow, toPage, toRecentPage } from "../cursor.ts";
import { type Conversion, pendingMigrations, SCHEMA_MIGRATIONS_DDL } from "../migrations/mod.ts";
import {
  CHECKPOINT_PAGE_MESSAGES,
  type CheckpointRow,
  checkpointsOf,
  type MessageRow,
  messageValues,
  newMessages,
  replicaLostMessagePrefix,
  type RunRow,
  type SessionRow,
  toCheckpointHead,
  toMessage,
  toRun,
  toSession,
} from "../records.ts";
import type {
  ChainFilter,
  ChainHead,
  LostRun,
  NewRun,
  PageQuery,
  RunChain,
  RunFilter,
  RunOutcome,
  RunStart,
  StepCommit,
  Store,
} from "../types.ts";

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
}

type Row = Record<string, SQLInputValue>;

/** How often the checkpoint worker folds the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 250;

const RUN_COLUMNS =
  "seq, run_id, session_id, tenant_id, status, parent_checkpoint_id, checkpoint_id, result, " +
  "interrupt_payload, error, created_at, updated_at";
/** `columns` qualified with a table alias (`r.seq, r.run_id, ...`). */
function prefixed(alias: string, columns: string): string {
  return columns.split(",").map((c) => `${alias}.${c.trim()}`).join(", ");
}
const MESSAGE_COLUMNS =
  "pos, message_id, session_id, run_id, role, content, tool_calls, tool_call_id, created_at";
const CHECKPOINT_COLUMNS =
  "seq, checkpoint_id, session_id, run_id, parent_id, step, state, message_clock, created_at";
/** The messages of a session's current conversation. */
const CURRENT = "tenant_id = ? AND session_id = ? AND removed_clock IS NULL";
/** The messages of a session's conversation at clock `?` (see `visibleAt`). */
const VISIBLE_AT = "tenant_id = ? AND session_id = ? AND added_clock <= ? AND " +
  "(removed_clock IS NULL OR removed_clock > ?)";
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
    pos: r.pos as number,
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
    message_clock: r.message_clock as number,
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
  #checkpointer: Checkpointer | null = null;
  /** The open group transaction of this turn of the event loop (see `#write`). */
  #group: PromiseWithResolvers<void> | null = null;
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
    // Each write of a group commit runs in a savepoint, whose undo pages go to a sub-journal: in
    // memory (it only holds the pages one turn's writes touch) rather than a temporary file.
    this.#db.exec("PRAGMA temp_store = MEMORY");
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

  /**
   * Runs `body` as a write that holds the database's write lock from its start. The writes of one
   * turn of the event loop share one transaction (group commit: at concurrency, runs' boundaries
   * touch the same pages, and one commit writes them and takes the locks once), and a write that
   * throws is undone alone: the first write of a group, alone in the transaction so far, by
   * rolling the transaction back (the group ends with it; a later write opens another), each
   * later one by its own savepoint. The transaction commits at the next turn; `#durable` makes a
   * method's promise wait for that commit.
   */
  #write<T>(body: () => T): T {
    if (!this.#group) return this.#firstWrite(body);
    this.#stmt("SAVEPOINT w").run();
    try {
      const result = body();
      this.#stmt("RELEASE w").run();
      return result;
    } catch (error) {
      this.#stmt("ROLLBACK TO w").run();
      this.#stmt("RELEASE w").run();
      throw error;
    }
  }

  /** The first write of a group: it opens the transaction, which holds nothing else yet. */
  #firstWrite<T>(body: () => T): T {
    const group = this.#openGroup();
    try {
      return body();
    } catch (error) {
      this.#group = null;
      group.resolve();
      if (this.#db.isOpen && this.#db.isTransaction) this.#stmt("ROLLBACK").run();
      throw error;
    }
  }

  #openGroup(): PromiseWithResolvers<void> {
    this.#stmt("BEGIN IMMEDIATE").run();
    const group = Promise.withResolvers<void>();
    group.promise.catch(() => {});
    this.#group = group;
    setImmediate(() => this.#commitGroup(group));
    return group;
  }

  /** Commits the open group (once: `close` may have got there first). */
  #commitGroup(group: PromiseWithResolvers<void>): void {
    if (this.#group !== group) return;
    this.#group = null;
    try {
      this.#stmt("COMMIT").run();
      group.resolve();
    } catch (error) {
      if (this.#db.isOpen && this.#db.isTransaction) this.#stmt("ROLLBACK").run();
      group.reject(error);
    }
  }

  /**
   * Runs a write method's synchronous `body` as a promise that resolves once what it wrote is
   * committed (the group it joined), and rejects at once when it throws.
   */
  #durable<T>(body: () => T): Promise<T> {
    let value: T;
    try {
      value = body();
    } catch (error) {
      return Promise.reject(error);
    }
    const group = this.#group;
    return group ? group.promise.then(() => value) : Promise.resolve(value);
  }

  /**
   * Bumps the session's `updated_at` and moves its message clock on by `ticks`; returns the clock
   * before the move, or null when the tenant has no such session.
   */
  #advance(tenant: string, sessionId: string, ticks: number, now: number): number | null {
    const row = this.#get(
      `UPDATE sessions SET updated_at = ?, message_clock = message_clock + ?
       WHERE tenant_id = ? AND session_id = ? RETURNING message_clock`,
      now,
      ticks,
      tenant,
      sessionId,
    );
    return row ? (row.message_clock as number) - ticks : null;
  }

  #requireSession(tenant: string, sessionId: string): void {
    const found = this.#get(
      "SELECT 1 AS found FROM sessions WHERE tenant_id = ? AND session_id = ?",
      tenant,
      sessionId,
    );
    if (!found) throw storeErrors.sessionNotFound(sessionId);
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
    if (running) throw storeErrors.sessionBusy(sessionId);
  }

  #runById(runId: string): Row | undefined {
    return this.#get(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`, runId);
  }

  /**
   * Appends message records to the conversation at clock ticks `clock + 1`, `clock + 2`, ...
   * (which are also their places); 409005 when an id is in the current conversation.
   */
  #insertMessages(tenant: string, sessionId: string, messages: Message[], clock: number): void {
    messages.forEach((message, i) => {
      const m = messageValues(message);
      try {
        this.#run(
          `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content,
           tool_calls, tool_call_id, created_at, pos, added_clock)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          tenant,
          sessionId,
          m.message_id,
          m.run_id,
          m.role,
          JSON.stringify(m.content),
          json(m.tool_calls),
          m.tool_call_id,
          m.created_at,
          clock + i + 1,
          clock + i + 1,
        );
      } catch (error) {
        // `messages_current_id` is the table's only unique key besides `seq`.
        if (String((error as Error).message).includes("UNIQUE constraint failed")) {
          throw storeErrors.messageExists(m.message_id);
        }
        throw error;
      }
    });
  }

  /** The step's messages and checkpoint, inside a write transaction (see `commitStep`). */
  #commitStep(step: StepCommit, now: number): void {
    const { tenant_id: tenant, session_id: sessionId } = step;
    const clock = this.#advance(tenant, sessionId, step.messages.length, now);
    if (clock === null) throw storeErrors.sessionNotFound(sessionId);
    this.#requireIdle(tenant, sessionId, step.run_id);
    this.#insertMessages(tenant, sessionId, step.messages, clock);
    const checkpoint = step.checkpoint;
    if (!checkpoint) return;
    this.#run(
      `INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id, run_id, parent_id, step,
       state, message_clock, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      checkpoint.checkpoint_id,
      tenant,
      sessionId,
      step.run_id,
      checkpoint.parent_id,
      checkpoint.state.step,
      JSON.stringify(checkpoint.state),
      clock + step.messages.length,
      now,
    );
    this.#run(
      "UPDATE runs SET checkpoint_id = ?, updated_at = ? WHERE run_id = ? AND tenant_id = ?",
      checkpoint.checkpoint_id,
      now,
      step.run_id,
      tenant,
    );
  }

  /** The conversation of a session at clock `mark`, oldest first. */
  #messagesAt(tenant: string, sessionId: string, mark: number): Message[] {
    return this.#all(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${VISIBLE_AT} ORDER BY pos`,
      tenant,
      sessionId,
      mark,
      mark,
    ).map((r) => toMessage(messageRow(r)));
  }

  /**
   * Checkpoint records for rows of one session, each with the conversation of its clock, as many
   * as fit `budget` messages in all (`checkpointsOf`).
   */
  #checkpoints(
    tenant: string,
    sessionId: string,
    rows: CheckpointRow[],
    budget?: number,
  ): Checkpoint[] {
    if (rows.length === 0) return [];
    const marks = rows.map((r) => r.message_clock);
    const low = Math.min(...marks);
    const high = Math.max(...marks);
    // One read for the page: every row visible at some clock between the lowest and the highest.
    const candidates = this.#all(
      `SELECT ${MESSAGE_COLUMNS}, added_clock, removed_clock FROM messages
       WHERE tenant_id = ? AND session_id = ? AND added_clock <= ?
       AND (removed_clock IS NULL OR removed_clock > ?) ORDER BY pos`,
      tenant,
      sessionId,
      high,
      low,
    ).map((r) => ({
      message: toMessage(messageRow(r)),
      added_clock: r.added_clock as number,
      removed_clock: r.removed_clock as number | null,
    }));
    return checkpointsOf(rows, candidates, budget);
  }

  migrate(): Promise<void> {
    return this.#durable(() => {
      // IMMEDIATE: a second process migrating the same file waits here, then sees the versions
      // the first one recorded and applies nothing.
      this.#write(() => {
        this.#db.exec(SCHEMA_MIGRATIONS_DDL);
        const applied = this.#db.prepare("SELECT version FROM schema_migrations").all()
          .map((r) => r.version as number);
        for (const migration of pendingMigrations(applied)) {
          for (const statement of migration.sqlite) this.#db.exec(statement);
          if (migration.convert) this.#convert(migration.convert);
          this.#db.prepare(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
          )
            .run(migration.version, migration.name, this.#clock.now());
        }
      });
      // Statements prepared before a migration may name tables it rebuilt.
      this.#statements.clear();
    });
  }

  /** Drives a conversion synchronously: the write lock is held, nothing may await. */
  #convert(conversion: Conversion): void {
    const steps = conversion("sqlite");
    let next = steps.next([]);
    while (!next.done) {
      const rows = this.#db.prepare(next.value.sql).all(...next.value.params as SQLInputValue[]);
      next = steps.next(rows as Row[]);
    }
  }

  ping(): Promise<void> {
    return attempt(() => {
      this.#get("SELECT 1 AS one");
    });
  }

  /**
   * Hands WAL checkpoints to a worker thread (see checkpointer.ts): this connection stops running
   * them inside its commits. Without a worker, SQLite's own checkpoints stay on.
   */
  async startCheckpointer(path: string, busyTimeoutMs: number): Promise<void> {
    const checkpointer = await startCheckpointer({
      path,
      intervalMs: CHECKPOINT_INTERVAL_MS,
      busyTimeoutMs,
      onFailure: () => {
        this.#checkpointer = null;
        if (this.#db.isOpen) this.#db.exec("PRAGMA wal_autocheckpoint = 1000");
      },
    });
    if (!checkpointer) return;
    this.#checkpointer = checkpointer;
    this.#db.exec("PRAGMA wal_autocheckpoint = 0");
  }

  async close(): Promise<void> {
    if (this.#group && this.#db.isOpen) this.#commitGroup(this.#group);
    const checkpointer = this.#checkpointer;
    this.#checkpointer = null;
    await checkpointer?.stop();
    if (!this.#db.isOpen) return;
    this.#statements.clear();
    this.#db.close();
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
      if (!row) throw storeErrors.sessionExists(id);
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
    return this.#durable(() => {
      this.#write(() => {
        this.#requireSession(tenant, sessionId);
        this.#requireIdle(tenant, sessionId, null);
        for (const table of ["messages", "checkpoints", "run_links", "runs", "sessions"]) {
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

  appendMessages(tenant: string, sessionId: string, inputs: MessageInput[]): Promise<Message[]> {
    return this.#durable(() => {
      const now = this.#clock.now();
      const messages = newMessages(sessionId, inputs, null, now);
      this.#write(() => {
        const clock = this.#advance(tenant, sessionId, messages.length, now);
        if (clock === null) throw storeErrors.sessionNotFound(sessionId);
        this.#requireIdle(tenant, sessionId, null);
        this.#insertMessages(tenant, sessionId, messages, clock);
      });
      return messages;
    });
  }

  listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>> {
    return attempt(() => {
      const { after, limit } = pageWindow(page);
      this.#requireSession(tenant, sessionId);
      const rows = this.#all(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} AND pos > ?
         ORDER BY pos LIMIT ?`,
        tenant,
        sessionId,
        after,
        limit,
      ).map(messageRow);
      const count = this.#get(
        `SELECT count(*) AS n FROM messages WHERE ${CURRENT}`,
        tenant,
        sessionId,
      )!;
      return toPage(rows, page.per_page, count.n as number, toMessage, (r) => r.pos);
    });
  }

  allMessages(tenant: string, sessionId: string): Promise<Message[]> {
    return attempt(() => {
      return this.#all(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} ORDER BY pos`,
        tenant,
        sessionId,
      ).map((r) => toMessage(messageRow(r)));
    });
  }

  getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null> {
    return attempt(() => {
      const row = this.#get(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} AND message_id = ?`,
        tenant,
        sessionId,
        messageId,
      );
      return row ? toMessage(messageRow(row)) : null;
    });
  }

  deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean> {
    return this.#durable(() => {
      return this.#write(() => {
        const clock = this.#advance(tenant, sessionId, 1, this.#clock.now());
        if (clock === null) throw storeErrors.sessionNotFound(sessionId);
        this.#requireIdle(tenant, sessionId, null);
        // The row stays for the checkpoints that saw it; it only leaves the conversation.
        const removed = this.#run(
          `UPDATE messages SET removed_clock = ? WHERE ${CURRENT} AND message_id = ?`,
          clock + 1,
          tenant,
          sessionId,
          messageId,
        ) > 0;
        // Nothing changed: roll the clock and updated_at back with the transaction.
        if (!removed) throw new NothingRemoved();
        return true;
      });
    }).catch((error) => {
      if (error instanceof NothingRemoved) return false;
      throw error;
    });
  }

  // Runs

  createRun(tenant: string, run: NewRun): Promise<Run> {
    return this.#durable(() => {
      const now = this.#clock.now();
      const messages = run.messages ?? [];
      const fork = run.fork_checkpoint_id ?? null;
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
        let clock = this.#advance(tenant, run.session_id, (fork ? 1 : 0) + messages.length, now);
        if (clock === null) throw storeErrors.sessionNotFound(run.session_id);
        if (run.expect_clock !== undefined && clock !== run.expect_clock) {
          throw new ConversationChanged(run.session_id);
        }
        let inserted: Row;
        try {
          inserted = this.#get(
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
          if (String((error as Error).message).includes("UNIQUE constraint failed")) {
            // Run ids are global: another tenant's run with this id is a conflict too. Asked
            // only now, so a run id both taken and in a busy session is still a `run_exists`.
            if (this.#get("SELECT 1 AS found FROM runs WHERE run_id = ?", run.run_id)) {
              throw storeErrors.runExists(run.run_id);
            }
            // The partial unique index `runs_one_running` is the only other unique key.
            throw storeErrors.sessionBusy(run.session_id);
          }
          throw error;
        }
        if (fork) {
          clock = this.#restore(tenant, run.session_id, fork, clock + 1);
        }
        this.#insertMessages(tenant, run.session_id, messages, clock);
        if (run.link) {
          this.#run(
            `INSERT INTO run_links (tenant_id, session_id, run_id, origin_run_id, note, created_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
            tenant,
            run.session_id,
            run.run_id,
            run.link.origin_run_id,
            json(run.link.note),
            now,
          );
        }
        return inserted;
      });
      return toRun(runRow(row));
    });
  }

  /**
   * Makes the conversation at checkpoint `checkpointId` the current one, at clock `clock`: current
   * messages it did not have leave, messages it had that left since come back (as copies in their
   * old places). Returns `clock`.
   */
  #restore(tenant: string, sessionId: string, checkpointId: string, clock: number): number {
    const found = this.#get(
      "SELECT message_clock FROM checkpoints WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?",
      tenant,
      sessionId,
      checkpointId,
    );
    if (!found) throw storeErrors.checkpointNotFound(checkpointId);
    const mark = found.message_clock as number;
    this.#run(
      `UPDATE messages SET removed_clock = ? WHERE ${CURRENT} AND added_clock > ?`,
      clock,
      tenant,
      sessionId,
      mark,
    );
    this.#run(
      `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
       tool_call_id, created_at, pos, added_clock)
       SELECT tenant_id, session_id, message_id, run_id, role, content, tool_calls, tool_call_id,
       created_at, pos, ? FROM messages WHERE tenant_id = ? AND session_id = ?
       AND added_clock <= ? AND removed_clock > ?`,
      clock,
      tenant,
      sessionId,
      mark,
      mark,
    );
    return clock;
  }

  readStart(tenant: string, sessionId: string, checkpointId?: string | null): Promise<RunStart> {
    return attempt(() => {
      // The clock is read first: a change another process commits between these reads moves it
      // past the value returned, so `createRun` refuses the plan (`ConversationChanged`).
      const session = this.#get(
        "SELECT message_clock FROM sessions WHERE tenant_id = ? AND session_id = ?",
        tenant,
        sessionId,
      );
      if (!session) return { clock: null, checkpoint: null, messages: [] };
      const row = checkpointId
        ? this.#get(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
           WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?`,
          tenant,
          sessionId,
          checkpointId,
        )
        : this.#get(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ? AND session_id = ?
           ORDER BY seq DESC LIMIT 1`,
          tenant,
          sessionId,
        );
      const checkpoint = row ? checkpointRow(row) : null;
      let messages: Message[];
      if (checkpointId) {
        messages = checkpoint ? this.#messagesAt(tenant, sessionId, checkpoint.message_clock) : [];
      } else {
        messages = this.#all(
          `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} ORDER BY pos`,
          tenant,
          sessionId,
        ).map((r) => toMessage(messageRow(r)));
      }
      return {
        clock: session.message_clock as number,
        checkpoint: checkpoint ? toCheckpointHead(checkpoint) : null,
        messages,
      };
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

  runChain(tenant: string, runId: string): Promise<RunChain | null> {
    return attempt(() => {
      const origin = this.#get(
        `SELECT coalesce((SELECT origin_run_id FROM run_links WHERE tenant_id = ? AND run_id = ?),
           (SELECT run_id FROM runs WHERE tenant_id = ? AND run_id = ?)) AS origin`,
        tenant,
        runId,
        tenant,
        runId,
      )?.origin as string | null;
      if (!origin) return null;
      const rows = this.#all(
        `SELECT ${prefixed("r", RUN_COLUMNS)}, l.note AS note FROM runs r
         LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
         WHERE r.tenant_id = ? AND (r.run_id = ? OR l.origin_run_id = ?) ORDER BY r.seq`,
        tenant,
        origin,
        origin,
      );
      return {
        origin_run_id: origin,
        runs: rows.map((r) => ({ run: toRun(runRow(r)), note: parse(r.note) })),
      };
    });
  }

  listChains(tenant: string, filter: ChainFilter, page: PageQuery): Promise<Page<ChainHead>> {
    return attempt(() => {
      const before = decodeRecentCursor(page.page);
      const where = ["rn = 1"];
      const params: SQLInputValue[] = [tenant];
      const scope = filter.session_id === undefined ? "" : "AND r.session_id = ?";
      if (filter.session_id !== undefined) params.push(filter.session_id);
      if (filter.statuses) {
        where.push("status IN (SELECT value FROM json_each(?))");
        params.push(JSON.stringify(filter.statuses));
      }
      if (filter.updated_since !== undefined) {
        where.push("updated_at >= ?");
        params.push(filter.updated_since);
      }
      // Each chain once, as its latest run (the highest seq of its runs).
      const chains = `WITH chained AS (
          SELECT ${prefixed("r", RUN_COLUMNS)}, coalesce(l.origin_run_id, r.run_id) AS origin,
            row_number() OVER (PARTITION BY coalesce(l.origin_run_id, r.run_id) ORDER BY r.seq DESC)
              AS rn
          FROM runs r LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
          WHERE r.tenant_id = ? ${scope})
        SELECT * FROM chained WHERE ${where.join(" AND ")}`;
      const count = this.#get(`SELECT count(*) AS n FROM (${chains})`, ...params)!;
      const cursor = before ? "WHERE updated_at < ? OR (updated_at = ? AND seq < ?)" : "";
      const rows = this.#all(
        `SELECT * FROM (${chains}) ${cursor} ORDER BY updated_at DESC, seq DESC LIMIT ?`,
        ...params,
        ...(before ? [before.time, before.time, before.seq] : []),
        page.per_page + 1,
      );
      return toRecentPage(
        rows,
        page.per_page,
        count.n as number,
        (r) => ({ origin_run_id: r.origin as string, run: toRun(runRow(r)) }),
        (r) => ({ time: r.updated_at as number, seq: r.seq as number }),
      );
    });
  }

  commitStep(step: StepCommit): Promise<void> {
    return this.#durable(() => {
      this.#write(() => this.#commitStep(step, this.#clock.now()));
    });
  }

  finishRun(runId: string, outcome: RunOutcome, last?: StepCommit | null): Promise<Run> {
    return this.#durable(() => {
      const now = this.#clock.now();
      const row = this.#write(() => {
        if (last) this.#commitStep(last, now);
        return this.#get(
          `UPDATE runs SET status = ?, result = ?, interrupt_payload = ?, error = ?, updated_at = ?
           WHERE run_id = ? AND status = 'running' RETURNING ${RUN_COLUMNS}`,
          outcome.status,
          json(outcome.result),
          json(outcome.interrupt_payload),
          json(outcome.error),
          now,
          runId,
        ) ?? this.#runById(runId);
      });
      if (!row) throw storeErrors.runNotFound(runId);
      return toRun(runRow(row));
    });
  }

  cancelRun(tenant: string, runId: string): Promise<Run | null> {
    return this.#durable(() => {
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
    return this.#durable(() => {
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
      return row ? this.#checkpoints(tenant, sessionId, [checkpointRow(row)])[0] : null;
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
      return row ? this.#checkpoints(tenant, sessionId, [checkpointRow(row)])[0] : null;
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
      const paged = toPage(rows, page.per_page, count.n as number, (r) => r);
      return cutPage(
        paged,
        this.#checkpoints(tenant, sessionId, paged.items, CHECKPOINT_PAGE_MESSAGES),
      );
    });
  }
}

/** Thrown inside `deleteMessage`'s transaction to roll it back when there was nothing to remove. */
class NothingRemoved extends Error {}

/**
 * Opens a SQLite store at `path` (a file or `:memory:`), runs the migrations and, for a file,
 * starts its checkpoint worker.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const store = new SqliteStore(options);
  try {
    await store.migrate();
    if (options.path !== ":memory:") {
      await store.startCheckpointer(options.path, Math.max(0, options.busyTimeoutMs ?? 5000));
    }
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
