/**
 * Migration 4: run chains. A run may continue the work of an earlier run of its session (an A2A
 * task that takes another turn is a chain of runs); `run_links` maps such a run to the first run
 * of its chain (the origin), with what the caller keeps with the link (A2A: the message that
 * continued the task). A run without a link is the origin of its own chain. Written in the
 * continuing run's start transaction; removed with the session.
 */
import type { Migration } from "./types.ts";

/** The `run_links` table. */
export const runLinks: Migration = {
  version: 4,
  name: "run_links",
  sqlite: [
    `CREATE TABLE run_links (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      origin_run_id TEXT NOT NULL,
      note TEXT,
      created_at INTEGER NOT NULL,
      CONSTRAINT run_links_run_key UNIQUE (run_id)
    )`,
    `CREATE INDEX run_links_origin ON run_links (tenant_id, origin_run_id, seq)`,
    `CREATE INDEX run_links_session ON run_links (tenant_id, session_id)`,
    // Listing the tenant's chains by their last update.
    `CREATE INDEX runs_tenant_updated ON runs (tenant_id, updated_at)`,
  ],
  postgres: [
    `CREATE TABLE run_links (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      origin_run_id TEXT NOT NULL,
      note JSONB,
      created_at BIGINT NOT NULL,
      CONSTRAINT run_links_run_key UNIQUE (run_id)
    )`,
    `CREATE INDEX run_links_origin ON run_links (tenant_id, origin_run_id, seq)`,
    `CREATE INDEX run_links_session ON run_links (tenant_id, session_id)`,
    `CREATE INDEX runs_tenant_updated ON runs (tenant_id, updated_at)`,
  ],
};
