/**
 * The SQLite store's leases on running runs: the owner's heartbeats, the sweep of runs whose
 * owner stopped heartbeating, and the statuses the owner polls for cancellations (SQLite cannot
 * push them).
 */
import type { RunStatus } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { replicaLostMessagePrefix } from "../records.ts";
import type { LeaseMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import type { GroupCommit } from "./group_commit.ts";

/** The lease methods of the SQLite store on `conn`. */
export function sqliteLeases(conn: Connection, commits: GroupCommit, clock: Clock): LeaseMethods {
  return {
    watchCancellations(_listener) {
      return attempt(() => {
        // SQLite cannot push; the run service polls `runStatuses` instead.
        return async () => {};
      });
    },

    runStatuses(runIds) {
      return attempt(() => {
        const statuses = new Map<string, RunStatus>();
        if (runIds.length === 0) return statuses;
        const rows = conn.all(
          "SELECT run_id, status FROM runs WHERE run_id IN (SELECT value FROM json_each(?))",
          JSON.stringify(runIds),
        );
        for (const r of rows) statuses.set(r.run_id as string, r.status as RunStatus);
        return statuses;
      });
    },

    heartbeat(owner, runIds) {
      return attempt(() => {
        if (runIds.length === 0) return;
        conn.run(
          `UPDATE runs SET owner = ?, heartbeat_at = ?
           WHERE status = 'running' AND run_id IN (SELECT value FROM json_each(?))`,
          owner,
          clock.now(),
          JSON.stringify(runIds),
        );
      });
    },

    sweepLostRuns(now, leaseMs) {
      return commits.durable(() => {
        // One UPDATE ... RETURNING under the write lock: a run moves out of `running` exactly
        // once, so of two sweepers (threads or processes) only one reports it.
        const rows = commits.write(() =>
          conn.all(
            `UPDATE runs SET status = 'interrupted', updated_at = ?,
             error = json_object('code', 'replica_lost', 'message', ? || owner || ')')
             WHERE status = 'running' AND heartbeat_at < ?
             RETURNING tenant_id, run_id, session_id, owner`,
            clock.now(),
            replicaLostMessagePrefix(),
            now - leaseMs,
          )
        );
        return rows.map((r) => ({
          tenant_id: r.tenant_id as string,
          run_id: r.run_id as string,
          session_id: r.session_id as string,
          owner: r.owner as string,
        }));
      });
    },
  };
}
