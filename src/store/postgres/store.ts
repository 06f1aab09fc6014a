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
}

/**
 * Whether a postgres.js error means the database cannot be reached (down, restarting, refusing
 * connections, out of connections), as opposed to a query it refused.
 */
export function isPostgresOutage(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string") return false;
  if (error instanceof postgres.PostgresError) {
    // 08: connection exception; 57P0x: shutdown or starting up; 53300: too many connections;
    // 25006: a read-only standby answered (failover under way).
    return code.startsWith("08") || /^57P0[1-3]$/.test(code) || code === "53300" ||
      code === "25006";
  }
  return OUTAGE_CODES.has(code);
}

// Socket and postgres.js connection failures.
const OUTAGE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/**
 * Seconds before postgres.js reconnects after a failed connection. Its default grows as 3^n/100 up
 * to 20 s, so after a few failed attempts during an outage the pool (and the LISTEN connection)
 * would stay away for up to 20 s after the database is back; this one stays under half a second.
 */
function reconnectBackoff(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);
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
    pos: Number(r.pos),
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
    message_clock: Number(r.message_clock),
    created_at: Number(r.created_at),
  };
}

function uniqueViolation(error: unknown, constraint: string): boolean {
  return error instanceof postgres.PostgresError && error.code === "23505" &&
    error.constraint_name === constraint;
}

/** Message records as the one JSON parameter the functions of migration 2 take. */
function messagesParam(messages: Message[]): string {
  return JSON.stringify(messages.map(messageValues));
}

/** The step parameters of `agentd_commit_step` / `agentd_finish_run`, in their order. */
function stepParams(step: StepCommit) {
  const cp = step.checkpoint;
  return [
    step.tenant_id,
    step.session_id,
    messagesParam(step.messages),
    cp?.checkpoint_id ?? null,
    cp?.parent_id ?? null,
    cp ? JSON.stringify(cp.state) : null,
  ] as const;
}

/**
 * Turns what the functions of migration 2 raise into our errors: they raise a keyword (`P0001`),
 * the unique indexes a constraint violation.
 */
function mapWriteError(
  error: unknown,
  ids: { session: string; run?: string; checkpoint?: string },
) {
  if (error instanceof postgres.PostgresError) {
    if (error.code === "P0001") {
      switch (error.message) {
        case "session_not_found":
          return storeErrors.sessionNotFound(ids.session);
        case "session_busy":
          return storeErrors.sessionBusy(ids.session);
        case "conversation_changed":
          return new ConversationChanged(ids.session);
        case "run_exists":
          return storeErrors.runExists(ids.run ?? "");
        case "checkpoint_not_found":
          return storeErrors.checkpointNotFound(ids.checkpoint ?? "");
        case "message_exists":
          return storeErrors.messageExists(error.detail ?? "");
      }
    }
    if (uniqueViolation(error, "messages_current_id")) {
      // "Key (tenant_id, session_id, message_id)=(t, s, m) already exists.": two inputs of one batch.
      const key = /=\((.*)\) already exists/.exec(error.detail ?? "")?.[1] ?? "";
      return storeErrors.messageExists(key.slice(key.lastIndexOf(", ") + 2));
    }
    if (uniqueViolation(error, "runs_run_id_key")) return storeErrors.runExists(ids.run ?? "");
    if (uniqueViolation(error, "runs_one_running")) return storeErrors.sessionBusy(ids.session);
  }
  return error;
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
      connect_timeout: Math.max(1, Math.ceil((options.connectTimeoutMs ?? 5000) / 1000)),
      backoff: reconnectBackoff,
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
    if (rows.length === 0) throw storeErrors.sessionNotFound(sessionId);
  }

  /**
   * Throws 409003 when a run other than `runId` is running in the session: its conversation must
   * not change under that run. Called after the session row is locked, so a run cannot start
   * between this check and the write (`createRun` locks the same row first).
   */
  async #requireIdle(q: Query, tenant: string, sessionId: string, runId: string | null) {
    const running = await q`SELECT 1 FROM runs WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND status = 'running' AND run_id IS DISTINCT FROM ${runId}`;
    if (running.length > 0) throw storeErrors.sessionBusy(sessionId);
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
        if (migration.convert) await convert(tx, migration.convert);
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
    if (!row) throw storeErrors.sessionExists(id);
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
      if (!session) throw storeErrors.sessionNotFound(sessionId);
      await this.#requireIdle(tx, tenant, sessionId, null);
      await tx`DELETE FROM messages WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM checkpoints WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM run_links WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM runs WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      await tx`DELETE FROM sessions WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
    });
  }

  // Messages

  async appendMessages(
    tenant: string,
    sessionId: string,
    inputs: MessageInput[],
  ): Promise<Message[]> {
    const now = this.#clock.now();
    const messages = newMessages(sessionId, inputs, null, now);
    try {
      // A step without a run and without a checkpoint: the same checks, one statement.
      await this.#sql`SELECT agentd_commit_step(${tenant}, ${sessionId}, ${null}, ${now},
        ${messagesParam(messages)}::text::jsonb, ${null}, ${null}, ${null})`;
    } catch (error) {
      throw mapWriteError(error, { session: sessionId });
    }
    return messages;
  }

  async listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>> {
    const { after, limit } = pageWindow(page);
    await this.#requireSession(this.#sql, tenant, sessionId);
    const rows = await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND removed_clock IS NULL AND pos > ${after}
      ORDER BY pos LIMIT ${limit}`;
    const [{ n }] = await this.#sql`SELECT count(*) AS n FROM messages
      WHERE tenant_id = ${tenant} AND session_id = ${sessionId} AND removed_clock IS NULL`;
    return toPage(rows.map(messageRow), page.per_page, Number(n), toMessage, (r) => r.pos);
  }

  async allMessages(tenant: string, sessionId: string): Promise<Message[]> {
    const rows = await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND removed_clock IS NULL ORDER BY pos`;
    return rows.map((r) => toMessage(messageRow(r)));
  }

  async getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null> {
    const [row] = await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND removed_clock IS NULL AND message_id = ${messageId}`;
    return row ? toMessage(messageRow(row)) : null;
  }

  async deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean> {
    try {
      return await this.#sql.begin(async (tx) => {
        const [session] = await tx`UPDATE sessions SET updated_at = ${this.#clock.now()},
            message_clock = message_clock + 1
          WHERE tenant_id = ${tenant} AND session_id = ${sessionId} RETURNING message_clock`;
        if (!session) throw storeErrors.sessionNotFound(sessionId);
        await this.#requireIdle(tx, tenant, sessionId, null);
        // The row stays for the checkpoints that saw it; it only leaves the conversation.
        const removed = await tx`UPDATE messages SET removed_clock = ${session.message_clock}
          WHERE tenant_id = ${tenant} AND session_id = ${sessionId} AND removed_clock IS NULL
          AND message_id = ${messageId}`;
        // Nothing changed: roll the clock and updated_at back with the transaction.
        if (removed.count === 0) throw new NothingRemoved();
        return true;
      });
    } catch (error) {
      if (error instanceof NothingRemoved) return false;
      throw error;
    }
  }

  // Runs

  async createRun(tenant: string, run: NewRun): Promise<Run> {
    try {
      const now = this.#clock.now();
      const start = this.#sql`SELECT * FROM agentd_start_run(${tenant}, ${run.session_id},
        ${run.run_id}, ${run.parent_checkpoint_id}, ${run.owner}, ${now},
        ${run.create_session ?? false}, ${run.expect_clock ?? null}, ${
        run.fork_checkpoint_id ?? null
      }, ${messagesParam(run.messages ?? [])}::text::jsonb)`;
      // A link is written by the same statement (one transaction): a data-modifying CTE always
      // runs, reading the run the function inserted.
      const [row] = run.link
        ? await this.#sql`WITH started AS (${start}), linked AS (
            INSERT INTO run_links (tenant_id, session_id, run_id, origin_run_id, note, created_at)
            SELECT tenant_id, session_id, run_id, ${run.link.origin_run_id},
              ${json(run.link.note)}::text::jsonb, ${now} FROM started)
          SELECT * FROM started`
        : await start;
      return toRun(runRow(row));
    } catch (error) {
      throw mapWriteError(error, {
        session: run.session_id,
        run: run.run_id,
        checkpoint: run.fork_checkpoint_id ?? undefined,
      });
    }
  }

  async readStart(
    tenant: string,
    sessionId: string,
    checkpointId?: string | null,
  ): Promise<RunStart> {
    const named = checkpointId ?? null;
    // One statement, one snapshot: a first row with the clock and the checkpoint, then the
    // conversation as plain rows (aggregating it into one JSON value server-side was ~8x slower).
    const rows = await this.#sql`WITH c AS (
        SELECT * FROM checkpoints WHERE tenant_id = ${tenant} AND session_id = ${sessionId}
          AND (${named}::text IS NULL OR checkpoint_id = ${named}::text)
        ORDER BY seq DESC LIMIT 1)
      SELECT 0 AS part, 0::bigint AS pos,
        (SELECT message_clock FROM sessions
          WHERE tenant_id = ${tenant} AND session_id = ${sessionId}) AS clock,
        (SELECT to_jsonb(c) FROM c) AS checkpoint, NULL::text AS message_id,
        NULL::text AS run_id, NULL::text AS role, NULL::jsonb AS content,
        NULL::jsonb AS tool_calls, NULL::text AS tool_call_id, NULL::bigint AS created_at
      UNION ALL
      SELECT 1, m.pos, NULL, NULL, m.message_id, m.run_id, m.role, m.content, m.tool_calls,
        m.tool_call_id, m.created_at
      FROM messages m WHERE m.tenant_id = ${tenant} AND m.session_id = ${sessionId} AND CASE
        WHEN ${named}::text IS NULL THEN m.removed_clock IS NULL
        ELSE m.added_clock <= (SELECT message_clock FROM c)
          AND (m.removed_clock IS NULL OR m.removed_clock > (SELECT message_clock FROM c))
        END
      ORDER BY part, pos`;
    const [head, ...messages] = rows;
    if (head.clock === null) return { clock: null, checkpoint: null, messages: [] };
    const checkpoint = head.checkpoint ? checkpointRow(head.checkpoint) : null;
    return {
      clock: Number(head.clock),
      checkpoint: checkpoint ? toCheckpointHead(checkpoint) : null,
      messages: named !== null && !checkpoint
        ? []
        : messages.map((m) => toMessage(messageRow({ ...m, session_id: sessionId }))),
    };
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

  async runChain(tenant: string, runId: string): Promise<RunChain | null> {
    const sql = this.#sql;
    const rows = await sql`WITH origin AS (
        SELECT coalesce(
          (SELECT origin_run_id FROM run_links WHERE tenant_id = ${tenant} AND run_id = ${runId}),
          (SELECT run_id FROM runs WHERE tenant_id = ${tenant} AND run_id = ${runId})) AS id)
      SELECT r.*, l.note AS note, (SELECT id FROM origin) AS origin FROM runs r
        LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
        WHERE r.tenant_id = ${tenant}
          AND (r.run_id = (SELECT id FROM origin) OR l.origin_run_id = (SELECT id FROM origin))
        ORDER BY r.seq`;
    if (rows.length === 0) return null;
    return {
      origin_run_id: rows[0].origin,
      runs: rows.map((r) => ({ run: toRun(runRow(r)), note: r.note ?? null })),
    };
  }

  async listChains(tenant: string, filter: ChainFilter, page: PageQuery): Promise<Page<ChainHead>> {
    const before = decodeRecentCursor(page.page);
    const sql = this.#sql;
    const none = sql``;
    // Each chain once, as its latest run (the highest seq of its runs).
    const chains = sql`WITH chained AS (
        SELECT r.*, coalesce(l.origin_run_id, r.run_id) AS origin,
          row_number() OVER (PARTITION BY coalesce(l.origin_run_id, r.run_id) ORDER BY r.seq DESC)
            AS rn
        FROM runs r LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
        WHERE r.tenant_id = ${tenant}
          ${filter.session_id !== undefined ? sql`AND r.session_id = ${filter.session_id}` : none})
      SELECT * FROM chained WHERE rn = 1
        ${filter.statuses ? sql`AND status = ANY(${filter.statuses}::text[])` : none}
        ${
      filter.updated_since !== undefined ? sql`AND updated_at >= ${filter.updated_since}` : none
    }`;
    const [{ n }] = await sql`SELECT count(*) AS n FROM (${chains}) c`;
    const rows = await sql`SELECT * FROM (${chains}) c ${
      before
        ? sql`WHERE updated_at < ${before.time} OR (updated_at = ${before.time} AND seq < ${before.seq})`
        : none
    } ORDER BY updated_at DESC, seq DESC LIMIT ${page.per_page + 1}`;
    return toRecentPage(
      [...rows],
      page.per_page,
      Number(n),
      (r) => ({ origin_run_id: r.origin, run: toRun(runRow(r)) }),
      (r) => ({ time: Number(r.updated_at), seq: Number(r.seq) }),
    );
  }

  async commitStep(step: StepCommit): Promise<void> {
    const [tenant, session, messages, checkpoint, parent, state] = stepParams(step);
    try {
      await this.#sql`SELECT agentd_commit_step(${tenant}, ${session}, ${step.run_id},
        ${this.#clock.now()}, ${messages}::text::jsonb, ${checkpoint}, ${parent},
        ${state}::text::jsonb)`;
    } catch (error) {
      throw mapWriteError(error, { session: step.session_id, run: step.run_id });
    }
  }

  async finishRun(runId: string, outcome: RunOutcome, last?: StepCommit | null): Promise<Run> {
    const [tenant, session, messages, checkpoint, parent, state] = last
      ? stepParams(last)
      : [null, null, null, null, null, null];
    let row: Row | undefined;
    try {
      [row] = await this.#sql`SELECT * FROM agentd_finish_run(${runId}, ${this.#clock.now()},
        ${outcome.status}, ${json(outcome.result)}::text::jsonb,
        ${json(outcome.interrupt_payload)}::text::jsonb, ${json(outcome.error)}::text::jsonb,
        ${tenant}, ${session}, ${messages}::text::jsonb, ${checkpoint}, ${parent},
        ${state}::text::jsonb)`;
    } catch (error) {
      throw mapWriteError(error, { session: last?.session_id ?? "", run: runId });
    }
    if (!row) throw storeErrors.runNotFound(runId);
    return toRun(runRow(row));
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

  async watchCancellations(
    listener: (runId: string) => void,
    onResumed?: () => void,
  ): Promise<() => Promise<void>> {
    // postgres.js calls `onlisten` on the first LISTEN and again each time it re-issued it on a
    // new connection (after the database restarted, say); with `reconnectBackoff` that is within
    // half a second of the database accepting connections again.
    let listening = false;
    const { unlisten } = await this.#sql.listen(this.#channel, (runId) => {
      try {
        listener(runId);
      } catch {
        // A failing listener must not break postgres.js's notification dispatch.
      }
    }, () => {
      if (listening) onResumed?.();
      listening = true;
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

  /**
   * Checkpoint records for rows of one session, each with the conversation of its clock, as many
   * as fit `budget` messages in all (`checkpointsOf`).
   */
  async #checkpoints(
    tenant: string,
    sessionId: string,
    rows: Row[],
    budget?: number,
  ): Promise<Checkpoint[]> {
    if (rows.length === 0) return [];
    const cps = rows.map(checkpointRow);
    const marks = cps.map((r) => r.message_clock);
    const low = Math.min(...marks);
    const high = Math.max(...marks);
    // One read for the page: every row visible at some clock between the lowest and the highest.
    const candidates = (await this.#sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND added_clock <= ${high}
      AND (removed_clock IS NULL OR removed_clock > ${low}) ORDER BY pos`).map((r) => ({
      message: toMessage(messageRow(r)),
      added_clock: Number(r.added_clock),
      removed_clock: r.removed_clock === null ? null : Number(r.removed_clock),
    }));
    return checkpointsOf(cps, candidates, budget);
  }

  async getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null> {
    const rows = await this.#sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND checkpoint_id = ${checkpointId}`;
    return (await this.#checkpoints(tenant, sessionId, rows))[0] ?? null;
  }

  async latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null> {
    const rows = await this.#sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} ORDER BY seq DESC LIMIT 1`;
    return (await this.#checkpoints(tenant, sessionId, rows))[0] ?? null;
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
    const seq = (r: Row) => Number(r.seq);
    const paged = toPage([...rows], page.per_page, Number(n), (r) => r, seq);
    const items = await this.#checkpoints(tenant, sessionId, paged.items, CHECKPOINT_PAGE_MESSAGES);
    return cutPage(paged, items, seq);
  }
}

/** Thrown inside `deleteMessage`'s transaction to roll it back when there was nothing to remove. */
class NothingRemoved extends Error {}

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
  const store = new PostgresStore(options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
