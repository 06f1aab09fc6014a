/**
 * Migration 3: drops `runs_running_heartbeat`. The sweep's `status = 'running' AND heartbeat_at <
 * ?` is served by `runs_one_running` (also partial on running runs, and as small), while the index
 * on `heartbeat_at` cost two index writes per run (its start and its end) and one per heartbeat of
 * every running run (on PostgreSQL it also kept heartbeats from being HOT updates).
 */
import type { Migration } from "./types.ts";

/** One index less to write. */
export const dropHeartbeatIndex: Migration = {
  version: 3,
  name: "drop_heartbeat_index",
  sqlite: ["DROP INDEX IF EXISTS runs_running_heartbeat"],
  postgres: ["DROP INDEX IF EXISTS runs_running_heartbeat"],
};
