/**
 * The PostgreSQL store's leases on running runs: the owner's heartbeats, the sweep of runs whose
 * owner stopped heartbeating, the statuses the owner polls, and the LISTEN that tells it of a
 * cancel at once (`cancelRun` notifies).
 */
import type postgres from "postgres";
import type { RunStatus } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { replicaLostMessagePrefix } from "../records.ts";
import type { LeaseMethods } from "../types.ts";

/**
 * The lease methods of the PostgreSQL store on the pool `sql`: cancellations are heard on
 * `channel`, and each watch's unsubscribe is kept in `unlisteners` until it is called (the store's
 * `close` calls those left).
 */
export function postgresLeases(
  sql: postgres.Sql,
  clock: Clock,
  channel: string,
  unlisteners: Set<() => Promise<void>>,
): LeaseMethods {
  return {
    async watchCancellations(listener, onResumed) {
      // postgres.js calls `onlisten` on the first LISTEN and again each time it re-issued it on a
      // new connection (after the database restarted, say); with `reconnectBackoff` that is
      // within half a second of the database accepting connections again.
      let listening = false;
      const { unlisten } = await sql.listen(channel, (runId) => {
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
        unlisteners.delete(stop);
        await unlisten();
      };
      unlisteners.add(stop);
      return stop;
    },

    async runStatuses(runIds) {
      const statuses = new Map<string, RunStatus>();
      if (runIds.length === 0) return statuses;
      const rows = await sql`SELECT run_id, status FROM runs
        WHERE run_id = ANY(${runIds}::text[])`;
      for (const r of rows) statuses.set(r.run_id, r.status);
      return statuses;
    },

    async heartbeat(owner, runIds) {
      if (runIds.length === 0) return;
      await sql`UPDATE runs SET owner = ${owner}, heartbeat_at = ${clock.now()}
        WHERE status = 'running' AND run_id = ANY(${runIds}::text[])`;
    },

    async sweepLostRuns(now, leaseMs) {
      // One UPDATE: a concurrent sweeper blocks on the row lock, then re-checks `status` on the
      // committed row and skips it, so each lost run is reported once.
      const rows = await sql`UPDATE runs SET status = 'interrupted', updated_at = ${clock.now()},
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
    },
  };
}
