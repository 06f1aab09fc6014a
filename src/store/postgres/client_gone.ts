/**
 * The PostgreSQL store's re-attach grace (`on_disconnect = "cancel"`) in `runs.client_gone_at`:
 * NULL while nothing happened, the time its attached client went away, or 0 once a client
 * attached to its events (then it waits for no one). A run is cancelled (with the NOTIFY of
 * `cancelRun`) only while it is marked gone.
 */
import type postgres from "postgres";
import type { Clock } from "../../clock.ts";
import type { ClientGoneMethods } from "../types.ts";

/** The re-attach grace methods of the PostgreSQL store; cancels are announced on `channel`. */
export function postgresClientGone(
  sql: postgres.Sql,
  clock: Clock,
  channel: string,
): ClientGoneMethods {
  return {
    async clientGone(runId) {
      const rows = await sql`UPDATE runs SET client_gone_at = ${clock.now()}
        WHERE run_id = ${runId} AND status = 'running' AND client_gone_at IS DISTINCT FROM 0
        RETURNING run_id`;
      return rows.length > 0;
    },

    async clientReattached(runId) {
      await sql`UPDATE runs SET client_gone_at = 0
        WHERE run_id = ${runId} AND status = 'running' AND client_gone_at IS DISTINCT FROM 0`;
    },

    async cancelIfClientGone(runId, graceMs) {
      return await sql.begin(async (tx) => {
        const now = clock.now();
        const [row] = await tx`UPDATE runs SET status = 'cancelled', updated_at = ${now},
            client_gone_at = NULL
          WHERE run_id = ${runId} AND status = 'running' AND client_gone_at > 0
            AND client_gone_at <= ${now - graceMs}
          RETURNING run_id`;
        // As `cancelRun`: inside the transaction, heard once committed.
        if (row) await tx`SELECT pg_notify(${channel}, ${runId})`;
        return row !== undefined;
      });
    },
  };
}
