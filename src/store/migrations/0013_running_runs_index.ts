/**
 * Migration 13: `runs_running`, an index of the running runs alone (executing or queued), by
 * tenant, session and attempt. Since migration 12 `runs_one_running` leaves out runs whose start
 * is pending, so nothing served `status = 'running'` by itself: the run queue's claim (after every
 * run that ends, and every poll), its depth (every poll), the lease sweep and a tenant's run
 * counts each read the whole table, every run ever kept, and a session's running runs were found
 * through all of its history. On SQLite that is a synchronous scan on the event loop: 1.8 ms for
 * the claim at 5,655 runs, growing with every run. With the index each reads the running runs
 * only; it costs one entry written at a run's start and removed at its end (a heartbeat changes no
 * column of it, so PostgreSQL keeps those updates HOT).
 */
import type { Migration } from "./types.ts";

const INDEX = `CREATE INDEX runs_running ON runs (tenant_id, session_id, attempt)
  WHERE status = 'running'`;

/** The index of running runs. */
export const runningRunsIndex: Migration = {
  version: 13,
  name: "running_runs_index",
  sqlite: [INDEX],
  postgres: [INDEX],
};
