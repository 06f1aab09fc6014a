/**
 * The SQLite store's chains of runs (a run and the runs linked to it, docs/storage.md "Run
 * chains"): one chain read from any of its runs, and a tenant's chains, newest first.
 */
import type { SQLInputValue } from "node:sqlite";
import { decodeRecentCursor, toRecentPage } from "../cursor.ts";
import { toRun } from "../records.ts";
import type { ChainMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import { decode, parse, prefixed, RUN_COLUMNS } from "./rows.ts";

/** The chain methods of the SQLite store on `conn`. */
export function sqliteChains(conn: Connection): ChainMethods {
  return {
    runChain(tenant, runId) {
      return attempt(() => {
        const origin = conn.get(
          `SELECT coalesce((SELECT origin_run_id FROM run_links WHERE tenant_id = ? AND run_id = ?),
             (SELECT run_id FROM runs WHERE tenant_id = ? AND run_id = ?)) AS origin`,
          tenant,
          runId,
          tenant,
          runId,
        )?.origin as string | null;
        if (!origin) return null;
        const rows = conn.all(
          `SELECT ${prefixed("r", RUN_COLUMNS)}, l.note AS note FROM runs r
           LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
           WHERE r.tenant_id = ? AND (r.run_id = ? OR l.origin_run_id = ?) ORDER BY r.seq`,
          tenant,
          origin,
          origin,
        );
        return {
          origin_run_id: origin,
          runs: rows.map((r) => ({ run: toRun(decode.run(r)), note: parse(r.note) })),
        };
      });
    },

    listChains(tenant, filter, page) {
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
              row_number() OVER (PARTITION BY coalesce(l.origin_run_id, r.run_id)
                ORDER BY r.seq DESC) AS rn
            FROM runs r LEFT JOIN run_links l ON l.tenant_id = r.tenant_id AND l.run_id = r.run_id
            WHERE r.tenant_id = ? ${scope})
          SELECT * FROM chained WHERE ${where.join(" AND ")}`;
        const count = conn.get(`SELECT count(*) AS n FROM (${chains})`, ...params)!;
        const cursor = before ? "WHERE updated_at < ? OR (updated_at = ? AND seq < ?)" : "";
        const rows = conn.all(
          `SELECT * FROM (${chains}) ${cursor} ORDER BY updated_at DESC, seq DESC LIMIT ?`,
          ...params,
          ...(before ? [before.time, before.time, before.seq] : []),
          page.per_page + 1,
        );
        return toRecentPage(
          rows,
          page.per_page,
          count.n as number,
          (r) => ({ origin_run_id: r.origin as string, run: toRun(decode.run(r)) }),
          (r) => ({ time: r.updated_at as number, seq: r.seq as number }),
        );
      });
    },
  };
}
