/**
 * The PostgreSQL store's leases on running runs: the owner's heartbeats (per attempt), the claim
 * of runs whose owner stopped heartbeating, their release at shutdown, the statuses the owner
 * polls, and the LISTEN that tells it of a cancel at once (`cancelRun` notifies).
 */
import type postgres from "postgres";
import type { RunStatus } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { replicaLostMessagePrefix } from "../records.ts";
import type { LeaseMethods } from "../types.ts";
import { decode } from "./rows.ts";

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

    async heartbeat(owner, runs) {
      if (runs.length === 0) return [];
      const ids = runs.map((r) => r.run_id);
      const attempts = runs.map((r) => r.attempt);
      // One statement: refresh what each attempt still owns, report what another attempt owns.
      const rows = await sql`WITH mine AS (
          SELECT * FROM unnest(${ids}::text[], ${attempts}::int[]) AS m(run_id, attempt)),
        beat AS (UPDATE runs r SET owner = ${owner}, heartbeat_at = ${clock.now()} FROM mine
          WHERE r.run_id = mine.run_id AND r.attempt = mine.attempt AND r.status = 'running')
        SELECT r.run_id FROM runs r JOIN mine ON r.run_id = mine.run_id
        WHERE r.attempt <> mine.attempt`;
      return rows.map((r) => r.run_id as string);
    },

    async claimLostRuns(owner, now, leaseMs, maxAttempts, limit) {
      const at = clock.now();
      const cut = now - leaseMs;
      // A concurrent sweeper blocks on the row lock, then re-checks `status` on the committed
      // row and skips it, so each run out of attempts is reported once.
      const failed = await sql`UPDATE runs SET status = 'failed', updated_at = ${at},
          error = jsonb_build_object('code', 'replica_lost',
            'message', ${replicaLostMessagePrefix()}::text || owner || ')')
        WHERE status = 'running' AND heartbeat_at < ${cut}
          AND attempt - handoffs >= ${maxAttempts} AND attempt > 0
        RETURNING tenant_id, run_id, session_id, owner`;
      // SKIP LOCKED: of two sweepers each claims other runs, none waits for the other.
      // `releaseRun` zeroes the heartbeat: such a run was handed over, not lost.
      const resumed = limit <= 0 ? [] : await sql`WITH lost AS (
          SELECT run_id, owner, heartbeat_at FROM runs
            WHERE status = 'running' AND heartbeat_at < ${cut}
            AND attempt - handoffs < ${maxAttempts} AND attempt > 0
            ORDER BY heartbeat_at, seq LIMIT ${limit}
            FOR UPDATE SKIP LOCKED)
        UPDATE runs r SET attempt = r.attempt + 1, owner = ${owner},
          heartbeat_at = ${Math.max(now, at)},
          updated_at = ${at} FROM lost WHERE r.run_id = lost.run_id
        RETURNING r.tenant_id, r.run_id, r.session_id, r.attempt, r.checkpoint_id, r.request,
          r.start_pending, lost.owner AS lost_owner,
          lost.heartbeat_at = 0 AS handed_over`;
      return {
        failed: failed.map((r) => ({
          tenant_id: r.tenant_id,
          run_id: r.run_id,
          session_id: r.session_id,
          owner: r.owner,
        })),
        resumed: resumed.map((r) => decode.claim(r, r.lost_owner)),
      };
    },

    async queueRun(runId) {
      const rows = await sql`UPDATE runs SET attempt = 0 WHERE run_id = ${runId}
        AND attempt = 1 AND status = 'running' RETURNING run_id`;
      return rows.length > 0;
    },

    async claimQueuedRuns(owner, limit, tenantMaxRunning) {
      const cap = tenantMaxRunning ?? 2 ** 31 - 1;
      const claimed = [];
      // One at a time: each claim sees the tenants' executing runs the previous one changed.
      while (claimed.length < limit) {
        const at = clock.now();
        // Round robin by tenant: a queued run's rank is its place in its tenant's queue plus the
        // runs its tenant executes now; the lowest rank goes first, the oldest among equals.
        // SKIP LOCKED: a run another claimer holds is passed over for the next; the re-checked
        // `attempt = 0` passes over one another claimer took meanwhile. A run waits while its
        // session has an earlier unfinished run or one already started (runs of one session
        // start one at a time, in the order they were queued).
        const [row] = await sql`WITH queued AS (
            SELECT run_id, tenant_id, seq,
              row_number() OVER (PARTITION BY tenant_id ORDER BY seq) AS pos
            FROM runs r WHERE status = 'running' AND attempt = 0 AND NOT EXISTS (
              SELECT 1 FROM runs p WHERE p.tenant_id = r.tenant_id
                AND p.session_id = r.session_id AND p.status = 'running'
                AND p.run_id <> r.run_id AND (p.seq < r.seq OR NOT p.start_pending))),
          executing AS (
            SELECT tenant_id, count(*) AS n FROM runs WHERE status = 'running' AND attempt > 0
            GROUP BY tenant_id),
          pick AS (
            SELECT r.run_id FROM runs r JOIN queued q ON r.run_id = q.run_id
            LEFT JOIN executing e ON e.tenant_id = q.tenant_id
            WHERE r.status = 'running' AND r.attempt = 0 AND coalesce(e.n, 0) < ${cap}
            ORDER BY q.pos + coalesce(e.n, 0), q.seq
            LIMIT 1 FOR UPDATE OF r SKIP LOCKED)
          UPDATE runs r SET attempt = 1, owner = ${owner}, heartbeat_at = ${at}, updated_at = ${at}
          FROM pick WHERE r.run_id = pick.run_id AND r.attempt = 0 AND r.status = 'running'
          RETURNING r.tenant_id, r.run_id, r.session_id, r.attempt, r.checkpoint_id, r.request,
            r.created_at, r.start_pending`;
        if (!row) break;
        claimed.push({ ...decode.claim(row, owner), created_at: Number(row.created_at) });
      }
      return claimed;
    },

    async queueDepth() {
      const [{ n }] = await sql`SELECT count(*) AS n FROM runs
        WHERE status = 'running' AND attempt = 0`;
      return Number(n);
    },

    async tenantRunCounts(tenant) {
      const [row] = await sql`SELECT count(*) FILTER (WHERE attempt > 0) AS running,
          count(*) FILTER (WHERE attempt = 0) AS queued
        FROM runs WHERE tenant_id = ${tenant} AND status = 'running'`;
      return { running: Number(row.running), queued: Number(row.queued) };
    },

    async releaseRun(runId, attempt) {
      // A hand-over is not a lost attempt: it does not count toward `maxAttempts`.
      const rows = await sql`UPDATE runs SET heartbeat_at = 0, handoffs = handoffs + 1
        WHERE run_id = ${runId}
        AND attempt = ${attempt} AND status = 'running' RETURNING run_id`;
      return rows.length > 0;
    },
  };
}
