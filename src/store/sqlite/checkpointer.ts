/**
 * WAL checkpoints on a worker thread. SQLite folds the WAL back into the database file itself
 * every 1,000 pages by default, inside whichever commit crosses the mark: on the thread that runs
 * every request, with two `fsync`s. Measured on the development machine that was about a third of
 * the store's time per run. Here a worker with a connection of its own runs a `PASSIVE`
 * checkpoint on an interval instead (it never blocks a writer), and the store's connection turns
 * its automatic checkpoints off. Durability stays what WAL with `synchronous = NORMAL` gives.
 */

/**
 * The worker: opens the database, checkpoints every `intervalMs`, checkpoints once more on close.
 * Plain JavaScript without a static import, as `deno compile` needs of a `data:` module (like the
 * JS tool Worker's bootstrap).
 */
export const CHECKPOINTER_SOURCE = `
let db;
let timer;
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Busy (another process checkpoints): the next tick tries again.
  }
};
self.onmessage = async (event) => {
  const message = event.data;
  if (message.open) {
    try {
      const { DatabaseSync } = await import("node:sqlite");
      db = new DatabaseSync(message.path);
      db.exec("PRAGMA busy_timeout = " + message.busyTimeoutMs);
      timer = setInterval(checkpoint, message.intervalMs);
      self.postMessage("opened");
    } catch (error) {
      self.postMessage("failed: " + (error && error.message));
    }
  } else if (message.close) {
    clearInterval(timer);
    if (db) {
      checkpoint();
      db.close();
    }
    self.postMessage("closed");
  }
};
`;

/** Where the worker starts: its source as a `data:` URL, so a compiled binary needs no file. */
export const CHECKPOINTER_URL = `data:text/javascript;base64,${btoa(CHECKPOINTER_SOURCE)}`;

/** Options of the checkpointer. */
export interface CheckpointerOptions {
  /** The database file (in WAL mode). */
  path: string;
  /** Milliseconds between checkpoints. */
  intervalMs: number;
  /** How long the worker's statements wait for another connection's lock. */
  busyTimeoutMs: number;
  /** Called if the worker dies after it started (the store then checkpoints itself again). */
  onFailure: () => void;
}

/** A running checkpoint worker. */
export interface Checkpointer {
  /** Checkpoints once more, closes the worker's connection and ends the worker. */
  stop(): Promise<void>;
}

/**
 * Starts the worker; resolves once its connection is open, or null when no worker could run (the
 * caller keeps SQLite's own checkpoints then).
 */
export async function startCheckpointer(
  options: CheckpointerOptions,
): Promise<Checkpointer | null> {
  let worker: Worker;
  try {
    worker = new Worker(CHECKPOINTER_URL, { type: "module", name: "sqlite-checkpointer" });
  } catch {
    return null;
  }
  const reply = (timeoutMs: number) =>
    new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve("timeout"), timeoutMs);
      worker.onmessage = (event: MessageEvent<string>) => {
        clearTimeout(timer);
        resolve(event.data);
      };
      worker.onerror = (event) => {
        event.preventDefault();
        clearTimeout(timer);
        resolve(`failed: ${event.message}`);
      };
    });
  const opened = reply(10_000);
  const { path, intervalMs, busyTimeoutMs } = options;
  worker.postMessage({ open: true, path, intervalMs, busyTimeoutMs });
  if (await opened !== "opened") {
    worker.terminate();
    return null;
  }
  worker.onerror = (event) => {
    event.preventDefault();
    options.onFailure();
  };
  return {
    async stop() {
      const closed = reply(options.busyTimeoutMs + 1000);
      worker.postMessage({ close: true });
      await closed;
      worker.terminate();
    },
  };
}
