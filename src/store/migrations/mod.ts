/**
 * The versioned migrations, in order. They are TypeScript modules imported statically so
 * `deno compile` embeds them and nothing reads SQL files at run time (Deno Deploy has none).
 */
import { initial } from "./0001_initial.ts";
import { linearCheckpoints } from "./0002_linear_checkpoints.ts";
import { dropHeartbeatIndex } from "./0003_drop_heartbeat_index.ts";
import { runLinks } from "./0004_run_links.ts";
import { durableRunCommits } from "./0005_durable_run_commits.ts";
import { runModelReport } from "./0006_run_model_report.ts";
import { runAttempts } from "./0007_run_attempts.ts";
import { runHandoffs } from "./0008_run_handoffs.ts";
import { runClientGone } from "./0009_run_client_gone.ts";
import { runSteps } from "./0010_run_steps.ts";
import { runSteering } from "./0011_run_steering.ts";
import { runEnqueue } from "./0012_run_enqueue.ts";
import { runningRunsIndex } from "./0013_running_runs_index.ts";
import { queuedRunHoldsSession } from "./0014_queued_run_holds_session.ts";
import type { Migration } from "./types.ts";

export type { Conversion, Migration, MigrationQuery } from "./types.ts";

/** Every migration, oldest first; append new versions here. */
export const migrations: readonly Migration[] = [
  initial,
  linearCheckpoints,
  dropHeartbeatIndex,
  runLinks,
  durableRunCommits,
  runModelReport,
  runAttempts,
  runHandoffs,
  runClientGone,
  runSteps,
  runSteering,
  runEnqueue,
  runningRunsIndex,
  queuedRunHoldsSession,
];

/** The bookkeeping table both dialects create before applying anything. */
export const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at BIGINT NOT NULL
)`;

/** A migration as people name it, `0005_durable_run_commits` (its file's name). */
export function migrationLabel(migration: Migration): string {
  return `${String(migration.version).padStart(4, "0")}_${migration.name}`;
}

/** The migrations not yet in `applied`, in version order. */
export function pendingMigrations(applied: Iterable<number>): Migration[] {
  const done = new Set(applied);
  return migrations.filter((m) => !done.has(m.version));
}
