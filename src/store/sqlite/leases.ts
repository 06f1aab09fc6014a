/**
 * The SQLite store's leases on running runs: the owner's heartbeats (per attempt), the claim of
 * runs whose owner stopped heartbeating, their release at shutdown, and the statuses the owner
 * polls for cancellations (SQLite cannot push them).
 */
import type { RunStatus } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { replicaLostMessagePrefix } from "../records.ts";
import type { LeaseMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import type { GroupCommit } from "./group_commit.ts";
import { decode } from "./rows.ts";

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

    heartbeat(owner, runs) {
      return attempt(() => {
        if (runs.length === 0) return [];
        const list = JSON.stringify(runs.map((r) => [r.run_id, r.attempt]));
        // Each listed run looked up by its id (a correlated EXISTS read the whole list for every
        // running run: 250,000 rows a beat at 500 runs, on the event loop).
        conn.run(
          `UPDATE runs SET owner = ?, heartbeat_at = ? FROM json_each(?) j
           WHERE runs.run_id = j.value ->> 0 AND runs.attempt = j.value ->> 1
             AND runs.status = 'running'`,
          owner,
          clock.now(),
          list,
        );
        return conn.all(
          `SELECT r.run_id FROM runs r JOIN json_each(?) j ON j.value ->> 0 = r.run_id
           WHERE r.attempt <> j.value ->> 1`,
          list,
        ).map((r) => r.run_id as string);
      });
    },

    claimLostRuns(owner, now, leaseMs, maxAttempts, limit) {
      return commits.durable(() => {
        // Under the write lock: a run is claimed (or failed) by one sweeper only.
        const now2 = clock.now();
        const cut = now - leaseMs;
        const failed = commits.write(() =>
          conn.all(
            `UPDATE runs SET status = 'failed', updated_at = ?,
             error = json_object('code', 'replica_lost', 'message', ? || owner || ')')
             WHERE status = 'running' AND heartbeat_at < ? AND attempt - handoffs >= ?
             AND attempt > 0
             RETURNING tenant_id, run_id, session_id, owner`,
            now2,
            replicaLostMessagePrefix(),
            cut,
            maxAttempts,
          )
        );
        const resumed = limit <= 0 ? [] : commits.write(() => {
          // `releaseRun` zeroes the heartbeat: such a run was handed over, not lost.
          const lost = conn.all(
            `SELECT run_id, owner, heartbeat_at = 0 AS handed_over FROM runs
             WHERE status = 'running' AND heartbeat_at < ?
             AND attempt - handoffs < ? AND attempt > 0 ORDER BY heartbeat_at, seq LIMIT ?`,
            cut,
            maxAttempts,
            limit,
          );
          return lost.map((l) => ({
            lost_owner: l.owner as string,
            handed_over: l.handed_over,
            row: conn.get(
              `UPDATE runs SET attempt = attempt + 1, owner = ?, heartbeat_at = ?, updated_at = ?
               WHERE run_id = ? RETURNING tenant_id, run_id, session_id, attempt, checkpoint_id,
               request, start_pending`,
              owner,
              // The sweep's own time: never claimable again by a sweep of the same moment.
              Math.max(now, now2),
              now2,
              l.run_id,
            )!,
          }));
        });
        return {
          failed: failed.map((r) => ({
            tenant_id: r.tenant_id as string,
            run_id: r.run_id as string,
            session_id: r.session_id as string,
            owner: r.owner as string,
          })),
          resumed: resumed.map(({ lost_owner, handed_over, row }) =>
            decode.claim({ ...row, handed_over }, lost_owner)
          ),
        };
      });
    },

    queueRun(runId) {
      return commits.durable(() =>
        commits.write(() =>
          conn.get(
            `UPDATE runs SET attempt = 0 WHERE run_id = ? AND attempt = 1 AND status = 'running'
             RETURNING run_id`,
            runId,
          ) !== undefined
        )
      );
    },

    claimQueuedRuns(owner, limit, tenantMaxRunning) {
      const cap = tenantMaxRunning ?? 2 ** 31 - 1;
      return commits.durable(() =>
        commits.write(() => {
          // Under the write lock: one claimer at a time. One run per pick, so each pick sees the
          // tenants' executing runs the previous one changed. Round robin by tenant: a queued
          // run's rank is its place in its tenant's queue plus the runs its tenant executes now.
          // A run waits while its session has an earlier unfinished run or one already started.
          const claimed = [];
          while (claimed.length < limit) {
            const at = clock.now();
            const row = conn.get(
              `UPDATE runs SET attempt = 1, owner = ?, heartbeat_at = ?, updated_at = ?
               WHERE run_id = (
                 SELECT q.run_id FROM (SELECT run_id, tenant_id, seq,
                     row_number() OVER (PARTITION BY tenant_id ORDER BY seq) AS pos
                   FROM runs r WHERE status = 'running' AND attempt = 0 AND NOT EXISTS
                     (SELECT 1 FROM runs p WHERE p.tenant_id = r.tenant_id
                       AND p.session_id = r.session_id AND p.status = 'running'
                       AND p.run_id <> r.run_id AND (p.seq < r.seq OR p.start_pending = 0))) q
                 LEFT JOIN (SELECT tenant_id, count(*) AS n FROM runs
                   WHERE status = 'running' AND attempt > 0 GROUP BY tenant_id) e
                   ON e.tenant_id = q.tenant_id
                 WHERE coalesce(e.n, 0) < ?
                 ORDER BY q.pos + coalesce(e.n, 0), q.seq LIMIT 1)
               RETURNING tenant_id, run_id, session_id, attempt, checkpoint_id, request,
               created_at, start_pending`,
              owner,
              at,
              at,
              cap,
            );
            if (!row) break;
            claimed.push({ ...decode.claim(row, owner), created_at: Number(row.created_at) });
          }
          return claimed;
        })
      );
    },

    queueDepth() {
      return attempt(() =>
        Number(
          conn.get(
            "SELECT count(*) AS n FROM runs WHERE status = 'running' AND attempt = 0",
          )!.n,
        )
      );
    },

    tenantRunCounts(tenant) {
      return attempt(() => {
        const row = conn.get(
          `SELECT coalesce(sum(attempt > 0), 0) AS running, coalesce(sum(attempt = 0), 0) AS queued
           FROM runs WHERE tenant_id = ? AND status = 'running'`,
          tenant,
        )!;
        return { running: Number(row.running), queued: Number(row.queued) };
      });
    },

    releaseRun(runId, runAttempt) {
      return commits.durable(() =>
        commits.write(() =>
          conn.get(
            // A hand-over is not a lost attempt: it does not count toward `maxAttempts`.
            `UPDATE runs SET heartbeat_at = 0, handoffs = handoffs + 1 WHERE run_id = ?
             AND attempt = ? AND status = 'running' RETURNING run_id`,
            runId,
            runAttempt,
          ) !== undefined
        )
      );
    },
  };
}
