/**
 * The PostgreSQL store (`postgres`, i.e. postgres.js), for several replicas. Each deployment (and
 * each test run) lives in its own schema, selected through the connection's `search_path`, so the
 * migrations' SQL stays unqualified. Writes that check before they write lock the session row
 * first (an `UPDATE` of its `updated_at`), which serialises them per session; the unique indexes
 * are the last word when two sessions race for one run id.
 */
import postgres from "postgres";
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
}

// deno-lint-ignore no-explicit-any
type Row = Record<string, any>;
type Query = postgres.Sql | postgres.TransactionSql;

/** Unquoted identifiers only: the schema name goes into `search_path` and a channel name. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The NOTIFY channel `cancelRun` signals on; one per schema so deployments stay apart. */
export function cancelChannel(schema: string): string {
  const channel = `agentd_cancel_${schema}`;
  // Channel names are identifiers (at most 63 bytes); a long schema keeps a prefix and a hash.
  if (channel.length <= 63) return channel;
  let hash = 0x811c9dc5;
  for (const char of schema) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return `${channel.slice(0, 54)}_${hash.toString(16).padStart(8, "0")}`;
}

/** JSON text bound as `${json(x)}::text::jsonb`; the text cast stops postgres.js encoding it twice. */
function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function sessionRow(r: Row): SessionRow {
  return {
    seq: Number(r.seq),
    session_id: r.session_id,
    metadata: r.metadata,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

function messageRow(r: Row): MessageRow {
  return {
    seq: Number(r.seq),
    message_id: r.message_id,
    session_id: r.session_id,
    run_id: r.run_id,
    role: r.role,
    content: r.content,
    tool_calls: r.tool_calls,
    tool_call_id: r.tool_call_id,
    created_at: Number(r.created_at),
  };
}

function runRow(r: Row): RunRow {
  return {
    seq: Number(r.seq),
    run_id: r.run_id,
    session_id: r.session_id,
    tenant_id: r.tenant_id,
    status: r.status,
    parent_checkpoint_id: r.parent_checkpoint_id,
    checkpoint_id: r.checkpoint_id,
    result: r.result,
    interrupt_payload: r.interrupt_payload,
    error: r.error,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

function checkpointRow(r: Row): CheckpointRow {
  return {
    seq: Number(r.seq),
    checkpoint_id: r.checkpoint_id,
    session_id: r.session_id,
    run_id: r.run_id,
    parent_id: r.parent_id,
    step: Number(r.step),
    state: r.state,
    created_at: Number(r.created_at),
  };
}

function uniqueViolation(error: unknown, constraint: string): boolean {
  return error instanceof postgres.PostgresError && error.code === "23505" &&
    error.constraint_name === constraint;
}

/** A store on one schema of a PostgreSQL database. */
export class PostgresStore implements Store {
  /** Always `postgres`. */
  readonly kind = "postgres" as const;
  /** The schema holding this store's tables. */
  readonly schema: string;
  readonly #sql: postgres.Sql;
  readonly #channel: string;
  readonly #unlisteners = new Set<() => Promise<void>>();
  readonly #clock: Clock;

  /** Creates the connection pool (connections open lazily); call `migrate()` before use. */
  constructor(options: PostgresStoreOptions) {
    this.#clock = options.clock ?? systemClock;
    const schema = options.schema ?? "public";
    if (!SCHEMA_NAME.test(schema)) {
      throw new Error(
        `invalid PostgreSQL schema name '${schema}': use lowercase letters, digits and '_'`,
      );
    }
    this.schema = schema;
    this.#channel = cancelChannel(schema);
    this.#sql = postgres(options.url, {
      max: options.max ?? 10,
      // `CREATE ... IF NOT EXISTS` notices are expected on every start; keep them off stdout.
      onnotice: () => {},
      connection: { search_path: schema, application_name: "agentd" },
    });
  }

  /** Locks the session row (by bumping `updated_at`); false when the tenant has no such session. */
  async #touchSession(q: Query, tenant: string, sessionId: string, now: number): Promise<boolean> {
    const rows = await q`UPDATE sessions SET updated_at = ${now}
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId} RETURNING seq`;
    return rows.length > 0;
  }

  /** Checks that the session exists, holding a share lock on it when inside a transaction. */
  async #requireSession(q: Query, tenant: string, sessionId: string, lock = false): Promise<void> {
    const rows = lock
      ? await q`SELECT seq FROM sessions WHERE tenant_id = ${tenant}
          AND session_id = ${sessionId} FOR SHARE`
      : await q`SELECT seq FROM sessions WHERE tenant_id = ${tenant}
          AND session_id = ${sessionId}`;
    if (rows.length === 0) throw errors.sessionNotFound(sessionId);
  }

  /**
   * Throws 409003 when a run other than `runId` is running in the session: its conversation must
   * not change under that run. Called after the session row is locked, so a run cannot start
   * between this check and the write (`createRun` locks the same row first).
   */
  async #requireIdle(q: Query, tenant: string, sessionId: string, runId: string | null) {
    const running = await q`SELECT 1 FROM runs WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND status = 'running' AND run_id IS DISTINCT FROM ${runId}`;
    if (running.length > 0) throw errors.sessionBusy(sessionId);
  }

  async migrate(): Promise<void> {
    await this.#sql.begin(async (tx) => {
      // The advisory lock serialises concurrent starts, including `CREATE SCHEMA IF NOT EXISTS`,
      // which is not safe on its own when two sessions race; it is released at commit.
      await tx`SELECT pg_advisory_xact_lock(hashtext(${`agentd_migrate:${this.schema}`}))`;
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      await tx.unsafe(SCHEMA_MIGRATIONS_DDL);
      const applied = await tx`SELECT version FROM schema_migrations`;
      for (const migration of pendingMigrations(applied.map((r) => Number(r.version)))) {
        for (const statement of migration.postgres) await tx.unsafe(statement);
        await tx`INSERT INTO schema_migrations (version, name, applied_at)
          VALUES (${migration.version}, ${migration.name}, ${this.#clock.now()})`;
      }
    });
  }

  async ping(): Promise<void> {
    await this.#sql`SELECT 1`;
  }

  async close(): Promise<void> {
    // Unlisten first: postgres.js re-subscribes a listener whose connection closes.
    await Promise.allSettled([...this.#unlisteners].map((unlisten) => unlisten()));
    this.#unlisteners.clear();
    await this.#sql.end({ timeout: 5 });
  }

  // Sessions

  async createSession(
    tenant: string,
    input: { session_id?: string | null; metadata?: Record<string, unknown> | null },
  ): Promise<Session> {
    const id = input.session_id ?? crypto.randomUUID();
    const now = this.#clock.now();
    const [row] = await this.#sql`INSERT INTO sessions
        (tenant_id, session_id, metadata, created_at, updated_at)
      VALUES (${tenant}, ${id}, ${
      JSON.stringify(input.metadata ?? {})
    }::text::jsonb, ${now}, ${now})
      ON CONFLICT DO NOTHING RETURNING *`;
    if (!row) throw errors.sessionExists(id);
    return toSession(sessionRow(row));
  }

  async getSession(tenant: string, sessionId: string): Promise<Session | null> {
    const [row] = await this.#sql`SELECT * FROM sessions
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
    return row ? toSession(sessionRow(row)) : null;
  }

  async listSessions(tenant: string, page: PageQuery): Promise<Page<Session>> {
    const { after, limit } = pageWindow(page);
    const rows = await this.#sql`SELECT * FROM sessions
      WHERE tenant_id = ${tenant} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
    const [{ n }] = await this.#sql`SELECT count(*) AS n FROM sessions
      WHERE tenant_id = ${tenant}`;
    return toPage(rows.map(sessionRow), page.per_page, Number(n), toSession);
  }

  async deleteSession(tenant: string, sessionId: string): Promise<void> {
    await this.#sql.begin(async (tx) => {
      // FOR UPDATE waits for (and then blocks) appends and run creations on this session.
      const [session] = await tx`SELECT seq FROM sessions
        WHERE tenant_id = ${tenant} AND session_id = ${sessionId} FOR UPDATE`;
      if (!session) throw errors.sessionNotFound(sessionId);
      await this.#requireIdle(tx, tenant, sessionId, null);
      await tx`DELETE FROM messages WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM checkpoints WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM runs WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM sessions WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
    });
  }

  // Messages

  /**
   * Inserts messages in list order with multi-row INSERTs: rows of one VALUES list take their
   * `seq` in order, and a long conversation restored by `replaceMessages` costs a few round trips.
   */
  async #insertMessages(q: Query, tenant: string, rows: Omit<MessageRow, "seq">[]) {
    // 9 parameters a row; PostgreSQL allows 65535 parameters a statement.
    const chunk = 500;
    for (let start = 0; start < rows.length; start += chunk) {
      const params: (string | number | null)[] = [];
      const tuples = rows.slice(start, start + chunk).map((m) => {
        const at = params.length;
        params.push(
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
        const p = (i: number) => `$${at + i}`;
        return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::text::jsonb, ` +
          `${p(7)}::text::jsonb, ${p(8)}, ${p(9)}::bigint)`;
      });
      await q.unsafe(
        `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content,
          tool_calls, tool_call_id, created_at) VALUES ${tuples.join(", ")}`,
        params,
      );
    }
  }

  async appendMessages(
    tenant: string,
    sessionId: string,
    messages: MessageInput[],
    runId?: string | null,
  ): Promise<Message[]> {
    const now = this.#clock.now();
    const rows = newMessageRows(sessionId, messages, runId ?? null, now);
    await this.#sql.begin(async (tx) => {
      if (!await this.#touchSession(tx, tenant, sessionId, now)) {
        throw errors.sessionNotFound(sessionId);
      }
      await this.#requireIdle(tx, tenant, sessionId, runId ?? null);
      const ids = rows.map((m) => m.message_id);
      const [taken] = await tx`SELECT message_id FROM messages WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND message_id = ANY(${ids}::text[]) LIMIT 1`;
      if (taken) throw errors.messageExists(taken.message_id);
      await this.#insertMessages(tx, tenant, rows);
    });
    return rows.map((m) => toMessage({ ...m, seq: 0 }));
  }

  async listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>> {
    const { after, limit } = pageWindow(page);
    await this.#requireSession(this.#sql, tenant, sessionId);
    const rows = await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
    const [{ n }] = await this.#sql`SELECT count(*) AS n FROM messages
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
    return toPage(rows.map(messageRow), page.per_page, Number(n), toMessage);
  }

  async allMessages(tenant: string, sessionId: string): Promise<Message[]> {
    const rows = await this.#sql`SELECT * FROM messages
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId} ORDER BY seq`;
    return rows.map((r) => toMessage(messageRow(r)));
  }

  async getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null> {
    const [row] = await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND message_id = ${messageId}`;
    return row ? toMessage(messageRow(row)) : null;
  }

  async deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean> {
    return await this.#sql.begin(async (tx) => {
      await this.#requireSession(tx, tenant, sessionId, true);
      await this.#requireIdle(tx, tenant, sessionId, null);
      const deleted = await tx`DELETE FROM messages WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND message_id = ${messageId}`;
      if (deleted.count === 0) return false;
      await this.#touchSession(tx, tenant, sessionId, this.#clock.now());
      return true;
    });
  }

  async replaceMessages(tenant: string, sessionId: string, messages: Message[]): Promise<void> {
    const now = this.#clock.now();
    const rows = restoredMessageRows(sessionId, messages, now);
    await this.#sql.begin(async (tx) => {
      if (!await this.#touchSession(tx, tenant, sessionId, now)) {
        throw errors.sessionNotFound(sessionId);
      }
      // Deleting everything and inserting the list gives the kept rows fresh `seq` values in list
      // order, so the conversation order follows the list even where it differs from the old one.
      await tx`DELETE FROM messages WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await this.#insertMessages(tx, tenant, rows);
    });
  }

  // Runs

  async createRun(tenant: string, run: NewRun): Promise<Run> {
    const now = this.#clock.now();
    const row = await this.#sql.begin(async (tx) => {
      if (run.create_session) {
        await tx`INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
          VALUES (${tenant}, ${run.session_id}, '{}'::jsonb, ${now}, ${now})
          ON CONFLICT DO NOTHING`;
      }
      if (!await this.#touchSession(tx, tenant, run.session_id, now)) {
        throw errors.sessionNotFound(run.session_id);
      }
      // Run ids are global: another tenant's run with this id is a conflict too.
      const taken = await tx`SELECT 1 FROM runs WHERE run_id = ${run.run_id}`;
      if (taken.length > 0) throw errors.runExists(run.run_id);
      try {
        const [inserted] = await tx`INSERT INTO runs (run_id, tenant_id, session_id, status,
            parent_checkpoint_id, owner, heartbeat_at, created_at, updated_at)
          VALUES (${run.run_id}, ${tenant}, ${run.session_id}, 'running',
            ${run.parent_checkpoint_id}, ${run.owner}, ${now}, ${now}, ${now})
          RETURNING *`;
        return inserted;
      } catch (error) {
        if (uniqueViolation(error, "runs_run_id_key")) throw errors.runExists(run.run_id);
        if (uniqueViolation(error, "runs_one_running")) throw errors.sessionBusy(run.session_id);
        throw error;
      }
    });
    return toRun(runRow(row));
  }

  async getRun(tenant: string, runId: string): Promise<Run | null> {
    const [row] = await this.#sql`SELECT * FROM runs
      WHERE tenant_id = ${tenant} AND run_id = ${runId}`;
    return row ? toRun(runRow(row)) : null;
  }

  async listRuns(
    tenant: string,
    sessionId: string,
    filter: RunFilter,
    page: PageQuery,
  ): Promise<Page<Run>> {
    const { after, limit } = pageWindow(page);
    await this.#requireSession(this.#sql, tenant, sessionId);
    const sql = this.#sql;
    const none = sql``;
    const some = (values: string[] | undefined) => values !== undefined && values.length > 0;
    const where = sql`tenant_id = ${tenant} AND session_id = ${sessionId}
      ${some(filter.ids) ? sql`AND run_id = ANY(${filter.ids!}::text[])` : none}
      ${some(filter.session_ids) ? sql`AND session_id = ANY(${filter.session_ids!}::text[])` : none}
      ${some(filter.statuses) ? sql`AND status = ANY(${filter.statuses!}::text[])` : none}
      ${filter.created_before !== undefined ? sql`AND created_at < ${filter.created_before}` : none}
      ${filter.created_after !== undefined ? sql`AND created_at > ${filter.created_after}` : none}
      ${filter.updated_before !== undefined ? sql`AND updated_at < ${filter.updated_before}` : none}
      ${filter.updated_after !== undefined ? sql`AND updated_at > ${filter.updated_after}` : none}`;
    const rows = await sql`SELECT * FROM runs WHERE ${where} AND seq > ${after}
      ORDER BY seq LIMIT ${limit}`;
    const [{ n }] = await sql`SELECT count(*) AS n FROM runs WHERE ${where}`;
    return toPage(rows.map(runRow), page.per_page, Number(n), toRun);
  }

  async finishRun(runId: string, outcome: RunOutcome): Promise<Run> {
    // A single conditional UPDATE is the compare-and-set: of a finish, a cancel and a sweep
    // racing on one run, the first to commit wins and the others see it no longer running.
    const [updated] = await this.#sql`UPDATE runs SET status = ${outcome.status},
        result = ${json(outcome.result)}::text::jsonb,
        interrupt_payload = ${json(outcome.interrupt_payload)}::text::jsonb,
        error = ${json(outcome.error)}::text::jsonb, updated_at = ${this.#clock.now()}
      WHERE run_id = ${runId} AND status = 'running' RETURNING *`;
    if (updated) return toRun(runRow(updated));
    const [current] = await this.#sql`SELECT * FROM runs WHERE run_id = ${runId}`;
    if (!current) throw errors.runNotFound(runId);
    return toRun(runRow(current));
  }

  async cancelRun(tenant: string, runId: string): Promise<Run | null> {
    const row = await this.#sql.begin(async (tx) => {
      const [cancelled] =
        await tx`UPDATE runs SET status = 'cancelled', updated_at = ${this.#clock.now()}
        WHERE tenant_id = ${tenant} AND run_id = ${runId} AND status = 'running' RETURNING *`;
      if (cancelled) {
        // Inside the transaction: listeners hear of it only once the cancel is committed.
        await tx`SELECT pg_notify(${this.#channel}, ${runId})`;
        return cancelled;
      }
      const [current] = await tx`SELECT * FROM runs
        WHERE tenant_id = ${tenant} AND run_id = ${runId}`;
      return current ?? null;
    });
    return row ? toRun(runRow(row)) : null;
  }

  async watchCancellations(listener: (runId: string) => void): Promise<() => Promise<void>> {
    const { unlisten } = await this.#sql.listen(this.#channel, (runId) => {
      try {
        listener(runId);
      } catch {
        // A failing listener must not break postgres.js's notification dispatch.
      }
    });
    let done = false;
    const stop = async () => {
      if (done) return;
      done = true;
      this.#unlisteners.delete(stop);
      await unlisten();
    };
    this.#unlisteners.add(stop);
    return stop;
  }

  async runStatuses(runIds: string[]): Promise<Map<string, RunStatus>> {
    const statuses = new Map<string, RunStatus>();
    if (runIds.length === 0) return statuses;
    const rows = await this.#sql`SELECT run_id, status FROM runs
      WHERE run_id = ANY(${runIds}::text[])`;
    for (const r of rows) statuses.set(r.run_id, r.status);
    return statuses;
  }

  async heartbeat(owner: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.#sql`UPDATE runs SET owner = ${owner}, heartbeat_at = ${this.#clock.now()}
      WHERE status = 'running' AND run_id = ANY(${runIds}::text[])`;
  }

  async sweepLostRuns(now: number, leaseMs: number): Promise<LostRun[]> {
    // One UPDATE: a concurrent sweeper blocks on the row lock, then re-checks `status` on the
    // committed row and skips it, so each lost run is reported once.
    const rows = await this
      .#sql`UPDATE runs SET status = 'interrupted', updated_at = ${this.#clock.now()},
        error = jsonb_build_object('code', 'replica_lost',
          'message', ${replicaLostMessagePrefix()}::text || owner || ')')
      WHERE status = 'running' AND heartbeat_at < ${now - leaseMs}
      RETURNING tenant_id, run_id, session_id, owner`;
    return rows.map((r) => ({
      tenant_id: r.tenant_id,
      run_id: r.run_id,
      session_id: r.session_id,
      owner: r.owner,
    }));
  }

  // Checkpoints

  async addCheckpoint(tenant: string, checkpoint: NewCheckpoint): Promise<Checkpoint> {
    const row = await this.#sql.begin(async (tx) => {
      await this.#requireSession(tx, tenant, checkpoint.session_id, true);
      const now = this.#clock.now();
      const [inserted] = await tx`INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id,
          run_id, parent_id, step, state, created_at)
        VALUES (${crypto.randomUUID()}, ${tenant}, ${checkpoint.session_id}, ${checkpoint.run_id},
          ${checkpoint.parent_id}, ${checkpoint.state.step},
          ${JSON.stringify(checkpoint.state)}::text::jsonb, ${now})
        RETURNING *`;
      if (checkpoint.run_id !== null) {
        await tx`UPDATE runs SET checkpoint_id = ${inserted.checkpoint_id}, updated_at = ${now}
          WHERE run_id = ${checkpoint.run_id} AND tenant_id = ${tenant}`;
      }
      return inserted;
    });
    return toCheckpoint(checkpointRow(row));
  }

  async getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null> {
    const [row] = await this.#sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND checkpoint_id = ${checkpointId}`;
    return row ? toCheckpoint(checkpointRow(row)) : null;
  }

  async latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    const [row] = await this.#sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} ORDER BY seq DESC LIMIT 1`;
    return row ? toCheckpoint(checkpointRow(row)) : null;
  }

  async listCheckpoints(
    tenant: string,
    sessionId: string,
    page: PageQuery,
  ): Promise<Page<Checkpoint>> {
    const { after, limit } = pageWindow(page);
    await this.#requireSession(this.#sql, tenant, sessionId);
    const rows = await this.#sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
    const [{ n }] = await this.#sql`SELECT count(*) AS n FROM checkpoints
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
    return toPage(rows.map(checkpointRow), page.per_page, Number(n), toCheckpoint);
  }
}

/** Connects to PostgreSQL, creates the schema when missing and runs the migrations. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = new PostgresStore(options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
