/** The PostgreSQL store's sessions: create, read, list, and delete with everything they hold. */
import type postgres from "postgres";
import { totalsOfSums } from "../../api/usage.ts";
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { storeErrors } from "../errors.ts";
import { toSession } from "../records.ts";
import type { SessionMethods } from "../types.ts";
import { requireIdle } from "./conversation.ts";
import { decode } from "./rows.ts";
import { newId } from "../../ids.ts";

/** The session methods of the PostgreSQL store on the pool `sql`. */
export function postgresSessions(sql: postgres.Sql, clock: Clock): SessionMethods {
  return {
    async createSession(tenant, input) {
      const id = input.session_id ?? newId();
      const now = clock.now();
      const [row] = await sql`INSERT INTO sessions
          (tenant_id, session_id, metadata, created_at, updated_at)
        VALUES (${tenant}, ${id}, ${
        JSON.stringify(input.metadata ?? {})
      }::text::jsonb, ${now}, ${now})
        ON CONFLICT DO NOTHING RETURNING *`;
      if (!row) throw storeErrors.sessionExists(id);
      return toSession(decode.session(row));
    },

    async getSession(tenant, sessionId) {
      const [row] = await sql`SELECT * FROM sessions
        WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      return row ? toSession(decode.session(row)) : null;
    },

    async sessionTotals(tenant, sessionId) {
      // One row: the sums over every model step of the session's runs.
      const [row] = await sql`SELECT count(step) AS steps,
          sum((step->'usage'->>'input_tokens')::bigint) AS input_tokens,
          sum((step->'usage'->>'output_tokens')::bigint) AS output_tokens,
          sum((step->'usage'->>'reasoning_tokens')::bigint) AS reasoning_tokens,
          sum((step->'usage'->>'cached_input_tokens')::bigint) AS cached_input_tokens,
          sum((step->>'cost')::float8) AS cost
        FROM runs, jsonb_array_elements(coalesce(runs.model_report->'steps', '[]'::jsonb)) AS step
        WHERE runs.tenant_id = ${tenant} AND runs.session_id = ${sessionId}`;
      return totalsOfSums(row);
    },

    async listSessions(tenant, page) {
      const { after, limit } = pageWindow(page);
      const rows = await sql`SELECT * FROM sessions
        WHERE tenant_id = ${tenant} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
      const [{ n }] = await sql`SELECT count(*) AS n FROM sessions
        WHERE tenant_id = ${tenant}`;
      return toPage(rows.map(decode.session), page.per_page, Number(n), toSession);
    },

    async deleteSession(tenant, sessionId) {
      await sql.begin(async (tx) => {
        // FOR UPDATE waits for (and then blocks) appends and run creations on this session.
        const [session] = await tx`SELECT seq FROM sessions
          WHERE tenant_id = ${tenant} AND session_id = ${sessionId} FOR UPDATE`;
        if (!session) throw storeErrors.sessionNotFound(sessionId);
        await requireIdle(tx, tenant, sessionId, null);
        await tx`DELETE FROM messages WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
        await tx`DELETE FROM checkpoints WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
        await tx`DELETE FROM run_links WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
        await tx`DELETE FROM run_steps WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
        await tx`DELETE FROM runs WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
        await tx`DELETE FROM sessions WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      });
    },
  };
}
