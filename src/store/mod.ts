/**
 * The storage layer's public surface: `openStore` picks the implementation from the options,
 * opens it and runs the migrations, so callers get a ready `Store`.
 */
import { openPostgresStore } from "./postgres/mod.ts";
import { openSqliteStore } from "./sqlite/mod.ts";
import type { Store } from "./types.ts";
import type { Clock } from "../clock.ts";

export type {
  CheckpointData,
  CheckpointHead,
  LostRun,
  NewRun,
  PageQuery,
  RunFilter,
  RunOutcome,
  RunStart,
  StepCommit,
  Store,
} from "./types.ts";
export { ConversationChanged } from "./types.ts";
export { newMessages } from "./records.ts";
export { decodeCursor, encodeCursor } from "./cursor.ts";
export { StoreError, type StoreErrorKind } from "./errors.ts";

/** Where the store lives: a SQLite file (or `:memory:`) or a PostgreSQL database and schema. */
export type StoreOptions =
  & ({ kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema?: string })
  & {
    /** The time written into records (default the real time; tests move it on). */
    clock?: Clock;
  };

/**
 * Opens the store the options name and brings its schema up to date. Rejects when the database
 * cannot be reached or migrated (nothing stays open then).
 */
export function openStore(options: StoreOptions): Promise<Store> {
  switch (options.kind) {
    case "sqlite":
      return openSqliteStore({ path: options.path, clock: options.clock });
    case "postgres":
      return openPostgresStore({ url: options.url, schema: options.schema, clock: options.clock });
  }
}
