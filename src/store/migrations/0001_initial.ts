/**
 * Migration 1: sessions, messages, runs and checkpoints. Every table has a monotonic `seq` (list
 * order and pagination cursors) and a `tenant_id`; timestamps are epoch milliseconds so time
 * filters compare integers.
 */
import type { Migration } from "./types.ts";

/** The initial schema. */
export const initial: Migration = {
  version: 1,
  name: "initial",
  sqlite: [
    `CREATE TABLE sessions (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      metadata TEXT NOT NULL DEFAULT '{}',
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      CONSTRAINT sessions_tenant_session_key UNIQUE (tenant_id, session_id)
    )`,
    `CREATE INDEX sessions_tenant_seq ON sessions (tenant_id, seq)`,
    `CREATE TABLE messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      run_id TEXT,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      tool_calls TEXT,
      tool_call_id TEXT,
      created_at INTEGER NOT NULL,
      CONSTRAINT messages_session_message_key UNIQUE (tenant_id, session_id, message_id)
    )`,
    `CREATE INDEX messages_session_seq ON messages (tenant_id, session_id, seq)`,
    `CREATE TABLE runs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      status TEXT NOT NULL
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'cancelled')),
      parent_checkpoint_id TEXT,
      checkpoint_id TEXT,
      result TEXT,
      interrupt_payload TEXT,
      error TEXT,
      owner TEXT NOT NULL,
      heartbeat_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      CONSTRAINT runs_run_id_key UNIQUE (run_id)
    )`,
    `CREATE INDEX runs_session_seq ON runs (tenant_id, session_id, seq)`,
    // One running run per session, enforced by the database rather than by a racy check.
    `CREATE UNIQUE INDEX runs_one_running ON runs (tenant_id, session_id)
      WHERE status = 'running'`,
    `CREATE INDEX runs_running_heartbeat ON runs (heartbeat_at) WHERE status = 'running'`,
    `CREATE TABLE checkpoints (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      checkpoint_id TEXT NOT NULL,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      run_id TEXT,
      parent_id TEXT,
      step INTEGER NOT NULL,
      state TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      CONSTRAINT checkpoints_checkpoint_id_key UNIQUE (checkpoint_id)
    )`,
    `CREATE INDEX checkpoints_session_seq ON checkpoints (tenant_id, session_id, seq)`,
  ],
  postgres: [
    `CREATE TABLE sessions (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      metadata JSONB NOT NULL DEFAULT '{}'::jsonb,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      CONSTRAINT sessions_tenant_session_key UNIQUE (tenant_id, session_id)
    )`,
    `CREATE INDEX sessions_tenant_seq ON sessions (tenant_id, seq)`,
    `CREATE TABLE messages (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      run_id TEXT,
      role TEXT NOT NULL,
      content JSONB NOT NULL,
      tool_calls JSONB,
      tool_call_id TEXT,
      created_at BIGINT NOT NULL,
      CONSTRAINT messages_session_message_key UNIQUE (tenant_id, session_id, message_id)
    )`,
    `CREATE INDEX messages_session_seq ON messages (tenant_id, session_id, seq)`,
    `CREATE TABLE runs (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      run_id TEXT NOT NULL,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      status TEXT NOT NULL
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted', 'cancelled')),
      parent_checkpoint_id TEXT,
      checkpoint_id TEXT,
      result JSONB,
      interrupt_payload JSONB,
      error JSONB,
      owner TEXT NOT NULL,
      heartbeat_at BIGINT NOT NULL,
      created_at BIGINT NOT NULL,
      updated_at BIGINT NOT NULL,
      CONSTRAINT runs_run_id_key UNIQUE (run_id)
    )`,
    `CREATE INDEX runs_session_seq ON runs (tenant_id, session_id, seq)`,
    // One running run per session, enforced by the database rather than by a racy check.
    `CREATE UNIQUE INDEX runs_one_running ON runs (tenant_id, session_id)
      WHERE status = 'running'`,
    `CREATE INDEX runs_running_heartbeat ON runs (heartbeat_at) WHERE status = 'running'`,
    `CREATE TABLE checkpoints (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      checkpoint_id TEXT NOT NULL,
      tenant_id TEXT NOT NULL,
      session_id TEXT NOT NULL,
      run_id TEXT,
      parent_id TEXT,
      step INTEGER NOT NULL,
      state JSONB NOT NULL,
      created_at BIGINT NOT NULL,
      CONSTRAINT checkpoints_checkpoint_id_key UNIQUE (checkpoint_id)
    )`,
    `CREATE INDEX checkpoints_session_seq ON checkpoints (tenant_id, session_id, seq)`,
  ],
};
