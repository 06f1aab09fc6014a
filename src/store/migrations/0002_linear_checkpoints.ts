/**
 * Migration 2: checkpoints reference the conversation instead of copying it, so a session's
 * storage grows linearly with its length.
 *
 * - `sessions.message_clock` counts every change of the session's conversation (a message added, a
 *   message removed, a fork restored).
 * - A message row says when it joined the conversation (`added_clock`) and when it left it
 *   (`removed_clock`, NULL while it is part of it); `pos` orders the conversation. Rows are never
 *   deleted while their session lives (deleting a message sets `removed_clock`), so every earlier
 *   conversation can be read again.
 * - A checkpoint keeps the clock of its moment (`message_clock`) and a small state (context,
 *   pending tool calls, step): its conversation is the rows with `added_clock <= message_clock`
 *   and `removed_clock` NULL or greater.
 *
 * Existing checkpoints are converted by `convertCheckpoints`: a checkpoint whose copied messages are
 * a prefix of the session's current messages points at that prefix; any other (forks, deleted
 * messages) gets its messages as rows visible at its clock alone (a negative clock no live row
 * reaches), so every old checkpoint keeps exactly its conversation.
 *
 * PostgreSQL gets the three writes a run makes as functions, so each is one statement (one round
 * trip) holding all of its checks: `agentd_start_run`, `agentd_commit_step`, `agentd_finish_run`.
 */
import type { Migration, MigrationQuery } from "./types.ts";

/**
 * Appends the step's messages and, when given, its checkpoint (shared by two functions).
 * Re-created by migration 5 without its asynchronous commit: this text is frozen, as migration 5
 * derives from it.
 */
export const COMMIT_STEP = `CREATE FUNCTION agentd_commit_step(
  p_tenant text, p_session text, p_run text, p_now bigint, p_messages jsonb,
  p_checkpoint text, p_parent text, p_state jsonb
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_count bigint := jsonb_array_length(p_messages);
  v_clock bigint;
  v_taken text;
BEGIN
  -- A run's intermediate step need not wait for the WAL flush: the run's end commit waits for it,
  -- and that flush covers this step too. A client's own message write (no run) stays synchronous.
  IF p_run IS NOT NULL THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  -- The session row lock orders this write after any run start or message write of the session.
  UPDATE sessions SET updated_at = p_now, message_clock = message_clock + v_count
    WHERE tenant_id = p_tenant AND session_id = p_session RETURNING message_clock INTO v_clock;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'session_not_found' USING ERRCODE = 'P0001';
  END IF;
  IF EXISTS (SELECT 1 FROM runs WHERE tenant_id = p_tenant AND session_id = p_session
      AND status = 'running' AND run_id IS DISTINCT FROM p_run) THEN
    RAISE EXCEPTION 'session_busy' USING ERRCODE = 'P0001';
  END IF;
  SELECT message_id INTO v_taken FROM messages WHERE tenant_id = p_tenant
    AND session_id = p_session AND removed_clock IS NULL
    AND message_id IN (SELECT e->>'message_id' FROM jsonb_array_elements(p_messages) AS e) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'message_exists' USING ERRCODE = 'P0001', DETAIL = v_taken;
  END IF;
  INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
      tool_call_id, created_at, pos, added_clock)
    SELECT p_tenant, p_session, e.value->>'message_id', e.value->>'run_id', e.value->>'role',
      e.value->'content', NULLIF(e.value->'tool_calls', 'null'::jsonb), e.value->>'tool_call_id',
      (e.value->>'created_at')::bigint, v_clock - v_count + e.ord, v_clock - v_count + e.ord
    FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS e(value, ord);
  IF p_checkpoint IS NOT NULL THEN
    INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id, run_id, parent_id, step, state,
        created_at, message_clock)
      VALUES (p_checkpoint, p_tenant, p_session, p_run, p_parent, (p_state->>'step')::int, p_state,
        p_now, v_clock);
    UPDATE runs SET checkpoint_id = p_checkpoint, updated_at = p_now
      WHERE run_id = p_run AND tenant_id = p_tenant;
  END IF;
END $$`;

/**
 * Creates the run with its input messages (after restoring a fork's conversation). Re-created by
 * migration 5 as COMMIT_STEP is.
 */
export const START_RUN = `CREATE FUNCTION agentd_start_run(
  p_tenant text, p_session text, p_run text, p_parent text, p_owner text, p_now bigint,
  p_create boolean, p_expect bigint, p_fork text, p_messages jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  v_count bigint := jsonb_array_length(p_messages);
  v_fork bigint := CASE WHEN p_fork IS NULL THEN 0 ELSE 1 END;
  v_clock bigint;
  v_mark bigint;
  v_taken text;
BEGIN
  -- Not flushed at commit: the run's end commit flushes the WAL up to and past this one.
  PERFORM set_config('synchronous_commit', 'off', true);
  IF p_create THEN
    INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
      VALUES (p_tenant, p_session, '{}'::jsonb, p_now, p_now) ON CONFLICT DO NOTHING;
  END IF;
  -- Locks the session row first, as every write of its conversation does.
  UPDATE sessions SET updated_at = p_now, message_clock = message_clock + v_fork + v_count
    WHERE tenant_id = p_tenant AND session_id = p_session
    RETURNING message_clock - v_fork - v_count INTO v_clock;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'session_not_found' USING ERRCODE = 'P0001';
  END IF;
  IF p_expect IS NOT NULL AND v_clock <> p_expect THEN
    RAISE EXCEPTION 'conversation_changed' USING ERRCODE = 'P0001';
  END IF;
  -- Run ids are global: another tenant's run with this id is a conflict too.
  IF EXISTS (SELECT 1 FROM runs WHERE run_id = p_run) THEN
    RAISE EXCEPTION 'run_exists' USING ERRCODE = 'P0001';
  END IF;
  RETURN QUERY INSERT INTO runs (run_id, tenant_id, session_id, status, parent_checkpoint_id,
      owner, heartbeat_at, created_at, updated_at)
    VALUES (p_run, p_tenant, p_session, 'running', p_parent, p_owner, p_now, p_now, p_now)
    RETURNING *;
  IF p_fork IS NOT NULL THEN
    SELECT message_clock INTO v_mark FROM checkpoints
      WHERE tenant_id = p_tenant AND session_id = p_session AND checkpoint_id = p_fork;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'checkpoint_not_found' USING ERRCODE = 'P0001';
    END IF;
    v_clock := v_clock + 1;
    UPDATE messages SET removed_clock = v_clock
      WHERE tenant_id = p_tenant AND session_id = p_session AND removed_clock IS NULL
        AND added_clock > v_mark;
    INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
        tool_call_id, created_at, pos, added_clock)
      SELECT tenant_id, session_id, message_id, run_id, role, content, tool_calls, tool_call_id,
        created_at, pos, v_clock
      FROM messages WHERE tenant_id = p_tenant AND session_id = p_session
        AND added_clock <= v_mark AND removed_clock > v_mark;
  END IF;
  SELECT message_id INTO v_taken FROM messages WHERE tenant_id = p_tenant
    AND session_id = p_session AND removed_clock IS NULL
    AND message_id IN (SELECT e->>'message_id' FROM jsonb_array_elements(p_messages) AS e) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'message_exists' USING ERRCODE = 'P0001', DETAIL = v_taken;
  END IF;
  INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content, tool_calls,
      tool_call_id, created_at, pos, added_clock)
    SELECT p_tenant, p_session, e.value->>'message_id', e.value->>'run_id', e.value->>'role',
      e.value->'content', NULLIF(e.value->'tool_calls', 'null'::jsonb), e.value->>'tool_call_id',
      (e.value->>'created_at')::bigint, v_clock + e.ord, v_clock + e.ord
    FROM jsonb_array_elements(p_messages) WITH ORDINALITY AS e(value, ord);
END $$`;

/** Writes the last step (when given) and the outcome (compare-and-set on `running`). */
const FINISH_RUN = `CREATE FUNCTION agentd_finish_run(
  p_run text, p_now bigint, p_status text, p_result jsonb, p_interrupt jsonb, p_error jsonb,
  p_tenant text, p_session text, p_messages jsonb, p_checkpoint text, p_parent text, p_state jsonb
) RETURNS SETOF runs LANGUAGE plpgsql AS $$
BEGIN
  IF p_session IS NOT NULL THEN
    PERFORM agentd_commit_step(p_tenant, p_session, p_run, p_now, p_messages, p_checkpoint,
      p_parent, p_state);
  END IF;
  -- The outcome is what the client is told: it waits for the WAL flush (the session's default).
  SET LOCAL synchronous_commit TO DEFAULT;
  -- Of a finish, a cancel and a sweep racing on one run, the first to commit wins.
  RETURN QUERY UPDATE runs SET status = p_status, result = p_result,
      interrupt_payload = p_interrupt, error = p_error, updated_at = p_now
    WHERE run_id = p_run AND status = 'running' RETURNING *;
  IF NOT FOUND THEN
    RETURN QUERY SELECT * FROM runs WHERE run_id = p_run;
  END IF;
END $$`;

/** Sorted-key JSON, so records compare equal whatever order their keys were stored in. */
function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
        : v,
  );
}

/** A JSON column as read: text (SQLite) or already decoded (PostgreSQL). */
function decoded(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

/** A stored message as the record a checkpoint copied (same fields, `null`s left out). */
function messageRecord(r: Record<string, unknown>): Record<string, unknown> {
  const record: Record<string, unknown> = {
    message_id: r.message_id,
    session_id: r.session_id,
    run_id: r.run_id ?? null,
    role: r.role,
    content: decoded(r.content),
    created_at: new Date(Number(r.created_at)).toISOString(),
  };
  const calls = decoded(r.tool_calls);
  if (calls !== null && calls !== undefined) record.tool_calls = calls;
  if (r.tool_call_id !== null && r.tool_call_id !== undefined) record.tool_call_id = r.tool_call_id;
  return record;
}

/**
 * Gives every existing checkpoint its `message_clock` and drops the copied messages from its
 * state (see the module comment), session by session so memory holds one session at a time.
 */
export function* convertCheckpoints(
  dialect: "sqlite" | "postgres",
): Generator<MigrationQuery, void, Record<string, unknown>[]> {
  const json = dialect === "postgres" ? "?::text::jsonb" : "?";
  const sessions: Record<string, unknown>[] = yield {
    sql: "SELECT DISTINCT tenant_id, session_id FROM checkpoints ORDER BY tenant_id, session_id",
    params: [],
  };
  for (const { tenant_id: tenant, session_id: session } of sessions) {
    const rows: Record<string, unknown>[] = yield {
      sql: `SELECT message_id, session_id, run_id, role, content, tool_calls, tool_call_id,
        created_at, added_clock FROM messages
        WHERE tenant_id = ? AND session_id = ? AND removed_clock IS NULL ORDER BY pos`,
      params: [tenant, session],
    };
    const current = rows.map((r) => ({
      clock: Number(r.added_clock),
      key: canonical(messageRecord(r)),
    }));
    const checkpoints: Record<string, unknown>[] = yield {
      sql: "SELECT seq, state FROM checkpoints WHERE tenant_id = ? AND session_id = ? ORDER BY seq",
      params: [tenant, session],
    };
    for (const checkpoint of checkpoints) {
      const { messages, ...rest } = decoded(checkpoint.state) as {
        messages?: Record<string, unknown>[];
      };
      const copied = messages ?? [];
      const prefix = copied.length <= current.length &&
        copied.every((m, i) => canonical(m) === current[i].key);
      let mark: number;
      if (prefix) {
        mark = copied.length === 0 ? 0 : current[copied.length - 1].clock;
      } else {
        mark = -Number(checkpoint.seq);
        for (const [i, m] of copied.entries()) {
          yield {
            sql: `INSERT INTO messages (tenant_id, session_id, message_id, run_id, role, content,
              tool_calls, tool_call_id, created_at, pos, added_clock, removed_clock)
              VALUES (?, ?, ?, ?, ?, ${json}, ${json}, ?, ?, ?, ?, ?)`,
            params: [
              tenant,
              session,
              m.message_id,
              m.run_id ?? null,
              m.role,
              JSON.stringify(m.content),
              m.tool_calls === undefined || m.tool_calls === null
                ? null
                : JSON.stringify(m.tool_calls),
              m.tool_call_id ?? null,
              Date.parse(String(m.created_at)) || 0,
              i + 1,
              mark,
              mark + 1,
            ],
          };
        }
      }
      yield {
        sql: `UPDATE checkpoints SET message_clock = ?, state = ${json} WHERE seq = ?`,
        params: [mark, JSON.stringify(rest), checkpoint.seq],
      };
    }
  }
}

/** The linear checkpoint schema and its conversion. */
export const linearCheckpoints: Migration = {
  version: 2,
  name: "linear_checkpoints",
  sqlite: [
    `ALTER TABLE sessions ADD COLUMN message_clock INTEGER NOT NULL DEFAULT 0`,
    // SQLite cannot drop the old table constraint on message ids (they are unique per session
    // only among current messages now), so the table is rebuilt.
    `CREATE TABLE messages_v2 (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      run_id TEXT,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      tool_calls TEXT,
      tool_call_id TEXT,
      created_at INTEGER NOT NULL,
      pos INTEGER NOT NULL,
      added_clock INTEGER NOT NULL,
      removed_clock INTEGER
    )`,
    `INSERT INTO messages_v2 (seq, tenant_id, session_id, message_id, run_id, role, content,
      tool_calls, tool_call_id, created_at, pos, added_clock)
      SELECT seq, tenant_id, session_id, message_id, run_id, role, content, tool_calls,
        tool_call_id, created_at, seq, seq FROM messages`,
    `DROP TABLE messages`,
    `ALTER TABLE messages_v2 RENAME TO messages`,
    `CREATE INDEX messages_session_pos ON messages (tenant_id, session_id, pos)`,
    `CREATE UNIQUE INDEX messages_current_id ON messages (tenant_id, session_id, message_id)
      WHERE removed_clock IS NULL`,
    `UPDATE sessions SET message_clock = COALESCE((SELECT max(m.seq) FROM messages m
      WHERE m.tenant_id = sessions.tenant_id AND m.session_id = sessions.session_id), 0)`,
    `ALTER TABLE checkpoints ADD COLUMN message_clock INTEGER NOT NULL DEFAULT 0`,
  ],
  postgres: [
    `ALTER TABLE sessions ADD COLUMN message_clock BIGINT NOT NULL DEFAULT 0`,
    `ALTER TABLE messages ADD COLUMN pos BIGINT, ADD COLUMN added_clock BIGINT,
      ADD COLUMN removed_clock BIGINT`,
    `UPDATE messages SET pos = seq, added_clock = seq`,
    `ALTER TABLE messages ALTER COLUMN pos SET NOT NULL, ALTER COLUMN added_clock SET NOT NULL`,
    `ALTER TABLE messages DROP CONSTRAINT messages_session_message_key`,
    `DROP INDEX messages_session_seq`,
    `CREATE INDEX messages_session_pos ON messages (tenant_id, session_id, pos)`,
    `CREATE UNIQUE INDEX messages_current_id ON messages (tenant_id, session_id, message_id)
      WHERE removed_clock IS NULL`,
    `UPDATE sessions s SET message_clock = m.top FROM (SELECT tenant_id, session_id,
      max(seq) AS top FROM messages GROUP BY tenant_id, session_id) m
      WHERE s.tenant_id = m.tenant_id AND s.session_id = m.session_id`,
    `ALTER TABLE checkpoints ADD COLUMN message_clock BIGINT NOT NULL DEFAULT 0`,
    COMMIT_STEP,
    START_RUN,
    FINISH_RUN,
  ],
  convert: convertCheckpoints,
};
