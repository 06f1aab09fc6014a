/** The SQLite store's sessions: create, read, list, and delete with everything they hold. */
import { totalsOfSums } from "../../api/usage.ts";
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { storeErrors } from "../errors.ts";
import { toSession } from "../records.ts";
import type { SessionMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import { requireIdle, requireSession } from "./conversation.ts";
import type { GroupCommit } from "./group_commit.ts";
import { decode, SESSION_COLUMNS } from "./rows.ts";
import { newId } from "../../ids.ts";

/** The session methods of the SQLite store on `conn`. */
export function sqliteSessions(
  conn: Connection,
  commits: GroupCommit,
  clock: Clock,
): SessionMethods {
  return {
    createSession(tenant, input) {
      return attempt(() => {
        const id = input.session_id ?? newId();
        const now = clock.now();
        const row = conn.get(
          `INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING ${SESSION_COLUMNS}`,
          tenant,
          id,
          JSON.stringify(input.metadata ?? {}),
          now,
          now,
        );
        if (!row) throw storeErrors.sessionExists(id);
        return toSession(decode.session(row));
      });
    },

    getSession(tenant, sessionId) {
      return attempt(() => {
        const row = conn.get(
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND session_id = ?`,
          tenant,
          sessionId,
        );
        return row ? toSession(decode.session(row)) : null;
      });
    },

    sessionTotals(tenant, sessionId) {
      return attempt(() => {
        // One row: the sums over every model step of the session's runs (the runs_session_seq
        // index finds the runs; json_each walks each stored report's steps).
        const row = conn.get(
          `SELECT count(step.value) AS steps,
             sum(json_extract(step.value, '$.usage.input_tokens')) AS input_tokens,
             sum(json_extract(step.value, '$.usage.output_tokens')) AS output_tokens,
             sum(json_extract(step.value, '$.usage.reasoning_tokens')) AS reasoning_tokens,
             sum(json_extract(step.value, '$.usage.cached_input_tokens')) AS cached_input_tokens,
             sum(json_extract(step.value, '$.cost')) AS cost
           FROM runs, json_each(runs.model_report, '$.steps') AS step
           WHERE runs.tenant_id = ? AND runs.session_id = ?`,
          tenant,
          sessionId,
        )!;
        return totalsOfSums(row);
      });
    },

    listSessions(tenant, page) {
      return attempt(() => {
        const { after, limit } = pageWindow(page);
        const rows = conn.all(
          `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND seq > ?
           ORDER BY seq LIMIT ?`,
          tenant,
          after,
          limit,
        ).map(decode.session);
        const count = conn.get("SELECT count(*) AS n FROM sessions WHERE tenant_id = ?", tenant)!;
        return toPage(rows, page.per_page, count.n as number, toSession);
      });
    },

    deleteSession(tenant, sessionId) {
      return commits.durable(() => {
        commits.write(() => {
          requireSession(conn, tenant, sessionId);
          requireIdle(conn, tenant, sessionId, null);
          for (
            const table of [
              "messages",
              "checkpoints",
              "run_links",
              "run_steps",
              "runs",
              "sessions",
            ]
          ) {
            conn.run(
              `DELETE FROM ${table} WHERE tenant_id = ? AND session_id = ?`,
              tenant,
              sessionId,
            );
          }
        });
      });
    },
  };
}
