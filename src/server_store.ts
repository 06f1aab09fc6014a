/**
 * The store a configuration names, opened at start: said in the log (which store, where, the
 * migrations applied), and when it cannot be opened, an error that names it, its URL with the
 * password masked and what to check, instead of a bare `connect ECONNREFUSED`.
 */
import type { Clock } from "./clock.ts";
import type { Config } from "./config/schema.ts";
import { maskUrl } from "./config/mask.ts";
import type { Logger } from "./log.ts";
import { openStore, type Store } from "./store/mod.ts";

/**
 * Opens the store of `runtime.storage`, saying which and what migrations it applied; a store
 * that cannot be opened is an error naming it, its URL (password masked) and what to check. Its
 * background work (SQLite's checkpoint worker) starts a second after `later` resolves.
 */
export async function openConfiguredStore(
  config: Config,
  log: Logger,
  clock: Clock | undefined,
  later?: { promise: Promise<void> },
): Promise<Store> {
  const storage = config.manifest.runtime.storage;
  const where = storage.kind === "postgres" ? maskUrl(storage.url!) : storage.path ?? ":memory:";
  log.info("opening store", { store: storage.kind ?? "sqlite", at: where });
  const onMigrated = (applied: readonly string[]) => {
    if (applied.length > 0) log.info("migrations applied", { migrations: applied });
  };
  try {
    return await openStore(
      storage.kind === "postgres"
        ? {
          kind: "postgres",
          url: storage.url!,
          schema: storage.schema,
          clock,
          timeoutMs: storage.timeout,
          onMigrated,
        }
        : {
          kind: "sqlite",
          path: storage.path ?? ":memory:",
          clock,
          timeoutMs: storage.timeout,
          onMigrated,
          background: later?.promise,
        },
    );
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const hint = storage.kind === "postgres"
      ? "check that PostgreSQL runs and accepts connections there, and the URL's host, port, " +
        "user, password and database (runtime.storage.url or AGENT__STORAGE__URL)"
      : "check that the folder exists and is writable, and that no other program holds the file " +
        "(runtime.storage.path or AGENT__STORAGE__PATH)";
    throw new StoreOpenError(
      `could not open the ${storage.kind ?? "sqlite"} store at ${where}: ${reason}; ${hint}`,
    );
  }
}

/** The store of the configuration could not be opened at start. */
export class StoreOpenError extends Error {
  override name = "StoreOpenError";
}
