/**
 * The PostgreSQL store's chains of runs (a run and the runs linked to it, docs/storage.md "Run
 * chains"): one chain read from any of its runs, and a tenant's chains, newest first.
 */
import type postgres from "postgres";
import { decodeRecentCursor, toRecentPage } from "../cursor.ts";
import { toRun } from "../records.ts";
import type { ChainMethods } from "../types.ts";
import { decode } from "./rows.ts";

/** The chain methods of the PostgreSQL store on the pool `sql`. */
export function postgresChains(sql: postgres.Sql): ChainMethods {
  return {
    async runChain(tenant, runId) {
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
        runs: rows.map((r) => ({ run: toRun(decode.run(r)), note: r.note ?? null })),
      };
    },

    async listChains(tenant, filter, page) {
      const before = decodeRecentCursor(page.page);
      const none = sql``;
      const { session_id, statuses, updated_since } = filter;
      // Each chain once, as its latest run (the highest seq of its runs).
      const chains = sql`WITH chained AS (
          SELECT r.*, coalesce(l.origin_run_id, r.run_id) AS origin,
            row_number() OVER (PARTITION BY coalesce(l.origin_run_id, r.run_id) ORDER BY r.seq DESC)
              AS rn
          FROM runs r LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
          WHERE r.tenant_id = ${tenant}
            ${session_id !== undefined ? sql`AND r.session_id = ${session_id}` : none})
        SELECT * FROM chained WHERE rn = 1
          ${statuses ? sql`AND status = ANY(${statuses}::text[])` : none}
          ${updated_since !== undefined ? sql`AND updated_at >= ${updated_since}` : none}`;
      const [{ n }] = await sql`SELECT count(*) AS n FROM (${chains}) c`;
      const cursor = before
        ? sql`WHERE updated_at < ${before.time}
          OR (updated_at = ${before.time} AND seq < ${before.seq})`
        : none;
      const rows = await sql`SELECT * FROM (${chains}) c ${cursor}
        ORDER BY updated_at DESC, seq DESC LIMIT ${page.per_page + 1}`;
      return toRecentPage(
        [...rows],
        page.per_page,
        Number(n),
        (r) => ({ origin_run_id: r.origin, run: toRun(decode.run(r)) }),
        (r) => ({ time: Number(r.updated_at), seq: Number(r.seq) }),
      );
    },
  };
}
