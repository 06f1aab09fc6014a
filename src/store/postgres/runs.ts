/**
 * The PostgreSQL store's runs: the start boundary (`createRun`, with what it starts from read by
 * `readStart` in one statement), the step and end boundaries (`commitStep`, `finishRun`), each
 * one call of a function of migration 2; reads; and cancel, which notifies the owner's watch.
 */
import type postgres from "postgres";
import type { Message } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { storeErrors } from "../errors.ts";
import { RUN_STATUS_SQL, toCheckpointHead, toMessage, toRun } from "../records.ts";
import { type DriverRow, jsonText, splitSteering } from "../rows.ts";
import type { RunMethods } from "../types.ts";
import { mapWriteError, messagesParam, stepParams } from "./boundaries.ts";
import { requireSession } from "./conversation.ts";
import { decode } from "./rows.ts";

/**
 * The run methods of the PostgreSQL store on the pool `sql`; `cancelRun` notifies on `channel`
 * (`cancelChannel`).
 */
export function postgresRuns(sql: postgres.Sql, clock: Clock, channel: string): RunMethods {
  return {
    async createRun(tenant, run) {
      try {
        const now = clock.now();
        const start = sql`SELECT * FROM agentd_start_run_with_request(
          ${jsonText(run.request)}::text::jsonb, ${tenant}, ${run.session_id},
          ${run.run_id}, ${run.parent_checkpoint_id}, ${run.owner}, ${now},
          ${run.create_session ?? false}, ${run.expect_clock ?? null}, ${
          run.fork_checkpoint_id ?? null
        }, ${messagesParam(run.messages ?? [])}::text::jsonb)`;
        // A link is written by the same statement (one transaction): a data-modifying CTE always
        // runs, reading the run the function inserted.
        const [row] = run.link
          ? await sql`WITH started AS (${start}), linked AS (
              INSERT INTO run_links (tenant_id, session_id, run_id, origin_run_id, note, created_at)
              SELECT tenant_id, session_id, run_id, ${run.link.origin_run_id},
                ${jsonText(run.link.note)}::text::jsonb, ${now} FROM started)
            SELECT * FROM started`
          : await start;
        return toRun(decode.run(row));
      } catch (error) {
        throw mapWriteError(error, {
          session: run.session_id,
          run: run.run_id,
          checkpoint: run.fork_checkpoint_id ?? undefined,
        });
      }
    },

    async readStart(tenant, sessionId, checkpointId) {
      const named = checkpointId ?? null;
      // One statement, one snapshot: a first row with the clock and the checkpoint, then the
      // conversation as plain rows (aggregating it into one JSON value server-side was ~8x
      // slower).
      const rows = await sql`WITH c AS (
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
      const checkpoint = head.checkpoint ? decode.checkpoint(head.checkpoint) : null;
      return {
        clock: Number(head.clock),
        checkpoint: checkpoint ? toCheckpointHead(checkpoint) : null,
        messages: named !== null && !checkpoint
          ? []
          : messages.map((m) => toMessage(decode.message({ ...m, session_id: sessionId }))),
      };
    },

    async getRun(tenant, runId) {
      const [row] = await sql`SELECT * FROM runs
        WHERE tenant_id = ${tenant} AND run_id = ${runId}`;
      return row ? toRun(decode.run(row)) : null;
    },

    async listRuns(tenant, sessionId, filter, page) {
      const { after, limit } = pageWindow(page);
      await requireSession(sql, tenant, sessionId);
      const none = sql``;
      const some = (values: string[] | undefined) => values !== undefined && values.length > 0;
      const { ids, session_ids, statuses, created_before, created_after } = filter;
      const { updated_before, updated_after } = filter;
      const where = sql`tenant_id = ${tenant} AND session_id = ${sessionId}
        ${some(ids) ? sql`AND run_id = ANY(${ids!}::text[])` : none}
        ${some(session_ids) ? sql`AND session_id = ANY(${session_ids!}::text[])` : none}
        ${
        some(statuses) ? sql`AND ${sql.unsafe(RUN_STATUS_SQL)} = ANY(${statuses!}::text[])` : none
      }
        ${created_before !== undefined ? sql`AND created_at < ${created_before}` : none}
        ${created_after !== undefined ? sql`AND created_at > ${created_after}` : none}
        ${updated_before !== undefined ? sql`AND updated_at < ${updated_before}` : none}
        ${updated_after !== undefined ? sql`AND updated_at > ${updated_after}` : none}`;
      const rows = await sql`SELECT * FROM runs WHERE ${where} AND seq > ${after}
        ORDER BY seq LIMIT ${limit}`;
      const [{ n }] = await sql`SELECT count(*) AS n FROM runs WHERE ${where}`;
      return toPage(rows.map(decode.run), page.per_page, Number(n), toRun);
    },

    async commitStep(step) {
      const [tenant, session, messages, checkpoint, parent, state] = stepParams(step);
      try {
        await sql`SELECT agentd_commit_run_step(${step.attempt ?? null}::integer, ${tenant},
          ${session}, ${step.run_id},
          ${clock.now()}, ${messages}::text::jsonb, ${checkpoint}, ${parent},
          ${state}::text::jsonb)`;
      } catch (error) {
        throw mapWriteError(error, {
          session: step.session_id,
          run: step.run_id,
          attempt: step.attempt,
        });
      }
    },

    async finishRun(runId, outcome, last, attempt) {
      const [tenant, session, messages, checkpoint, parent, state] = last
        ? stepParams(last)
        : [null, null, null, null, null, null];
      let row: DriverRow | undefined;
      try {
        [row] = await sql`SELECT * FROM agentd_finish_run_fenced(${attempt ?? null}::integer,
          ${runId}, ${clock.now()},
          ${outcome.status}, ${jsonText(outcome.result)}::text::jsonb,
          ${jsonText(outcome.interrupt_payload)}::text::jsonb,
          ${jsonText(outcome.error)}::text::jsonb,
          ${tenant}, ${session}, ${messages}::text::jsonb, ${checkpoint}, ${parent},
          ${state}::text::jsonb)`;
      } catch (error) {
        throw mapWriteError(error, { session: last?.session_id ?? "", run: runId, attempt });
      }
      if (!row) throw storeErrors.runNotFound(runId);
      return toRun(decode.run(row));
    },

    async saveModelReport(runId, report, attempt) {
      await sql`UPDATE runs SET model_report = ${jsonText(report)}::text::jsonb
        WHERE run_id = ${runId}
          AND (${attempt ?? null}::integer IS NULL OR attempt = ${attempt ?? null}::integer)`;
    },

    async steerRun(tenant, runId, messages) {
      const rows = await sql`UPDATE runs
        SET steering = COALESCE(steering, '[]'::jsonb) || ${JSON.stringify(messages)}::text::jsonb
        WHERE tenant_id = ${tenant} AND run_id = ${runId} AND status = 'running'
        RETURNING run_id`;
      return rows.length > 0;
    },

    async takeSteering(step) {
      try {
        return await sql.begin(async (tx) => {
          // Locked first: a steer waits for this take, and a second take finds nothing.
          const [row] = await tx`SELECT steering::text AS steering FROM runs
            WHERE run_id = ${step.run_id} FOR UPDATE`;
          if (!row?.steering) return [];
          const messages = JSON.parse(row.steering as string) as Message[];
          await tx`SELECT agentd_commit_run_step(${step.attempt ?? null}::integer,
            ${step.tenant_id}, ${step.session_id}, ${step.run_id}, ${clock.now()},
            ${messagesParam(messages)}::text::jsonb, NULL, NULL, NULL)`;
          await tx`UPDATE runs SET steering = NULL WHERE run_id = ${step.run_id}`;
          return messages;
        });
      } catch (error) {
        throw mapWriteError(error, {
          session: step.session_id,
          run: step.run_id,
          attempt: step.attempt,
        });
      }
    },

    async reclaimSteering(runId, messageIds) {
      return await sql.begin(async (tx) => {
        const [row] = await tx`SELECT steering::text AS steering FROM runs
          WHERE run_id = ${runId} AND status <> 'running' AND steering IS NOT NULL FOR UPDATE`;
        if (!row) return [];
        const [taken, left] = splitSteering(row.steering as string, messageIds);
        if (taken.length > 0) {
          await tx`UPDATE runs SET steering = ${left}::text::jsonb WHERE run_id = ${runId}`;
        }
        return taken;
      });
    },

    async queueBehind(tenant, run) {
      const now = clock.now();
      let row: DriverRow | undefined;
      try {
        [row] = await sql`INSERT INTO runs (run_id, tenant_id, session_id, status,
            parent_checkpoint_id, owner, heartbeat_at, created_at, updated_at, request, attempt,
            start_pending)
          SELECT ${run.run_id}, tenant_id, session_id, 'running', NULL, ${run.owner}, ${now},
            ${now}, ${now}, ${jsonText(run.request)}::text::jsonb, 0, true
          FROM sessions WHERE tenant_id = ${tenant} AND session_id = ${run.session_id}
          RETURNING *`;
      } catch (error) {
        throw mapWriteError(error, { session: run.session_id, run: run.run_id });
      }
      if (!row) throw storeErrors.sessionNotFound(run.session_id);
      return toRun(decode.run(row));
    },

    async beginQueued(start) {
      const ids = { session: start.session_id, run: start.run_id, attempt: start.attempt };
      try {
        await sql.begin(async (tx) => {
          const now = clock.now();
          await tx`SELECT agentd_commit_run_step(${start.attempt}::integer, ${start.tenant_id},
            ${start.session_id}, ${start.run_id}, ${now},
            ${messagesParam(start.messages)}::text::jsonb, NULL, NULL, NULL)`;
          await tx`UPDATE runs SET parent_checkpoint_id = ${start.parent_checkpoint_id},
            request = ${jsonText(start.request)}::text::jsonb, start_pending = false,
            updated_at = ${now} WHERE run_id = ${start.run_id}`;
        });
      } catch (error) {
        throw mapWriteError(error, ids);
      }
    },

    async cancelRun(tenant, runId) {
      const row = await sql.begin(async (tx) => {
        const now = clock.now();
        const [cancelled] = await tx`UPDATE runs SET status = 'cancelled', updated_at = ${now}
          WHERE tenant_id = ${tenant} AND run_id = ${runId} AND status = 'running' RETURNING *`;
        if (cancelled) {
          // Inside the transaction: listeners hear of it only once the cancel is committed.
          await tx`SELECT pg_notify(${channel}, ${runId})`;
          return cancelled;
        }
        const [current] = await tx`SELECT * FROM runs
          WHERE tenant_id = ${tenant} AND run_id = ${runId}`;
        return current ?? null;
      });
      return row ? toRun(decode.run(row)) : null;
    },
  };
}
