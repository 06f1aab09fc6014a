/**
 * Migration 9: the re-attach grace of `on_disconnect = "cancel"`. `runs.client_gone_at` is set
 * (store clock, ms) when a run's attached client went away (its connection dropped, or its replica
 * was lost and another attempt resumed the run) and cleared when a client re-attaches; the
 * owner cancels the run after `runtime.attached.reattach_grace` only while it is still set.
 */
import type { Migration } from "./types.ts";

/** The `runs.client_gone_at` column. */
export const runClientGone: Migration = {
  version: 9,
  name: "run_client_gone",
  sqlite: ["ALTER TABLE runs ADD COLUMN client_gone_at INTEGER"],
  postgres: ["ALTER TABLE runs ADD COLUMN client_gone_at BIGINT"],
};
