/**
 * The SQLite store's re-attach grace (`on_disconnect = "cancel"`) in `runs.client_gone_at`: NULL
 * while nothing happened, the time its attached client went away, or 0 once a client attached to
 * its events (then it waits for no one). A run is cancelled only while it is marked gone.
 */
import type { Clock } from "../../clock.ts";
import type { ClientGoneMethods } from "../types.ts";
import type { Connection } from "./connection.ts";
import type { GroupCommit } from "./group_commit.ts";

/** The re-attach grace methods of the SQLite store on `conn`. */
export function sqliteClientGone(
  conn: Connection,
  commits: GroupCommit,
  clock: Clock,
): ClientGoneMethods {
  const write = <T>(fn: () => T) => commits.durable(() => commits.write(fn));
  return {
    clientGone(runId) {
      return write(() =>
        conn.get(
          `UPDATE runs SET client_gone_at = ? WHERE run_id = ? AND status = 'running'
           AND client_gone_at IS NOT 0 RETURNING run_id`,
          clock.now(),
          runId,
        ) !== undefined
      );
    },

    async clientReattached(runId) {
      await write(() =>
        conn.run(
          `UPDATE runs SET client_gone_at = 0 WHERE run_id = ? AND status = 'running'
           AND client_gone_at IS NOT 0`,
          runId,
        )
      );
    },

    cancelIfClientGone(runId, graceMs) {
      return write(() => {
        const now = clock.now();
        return conn.get(
          `UPDATE runs SET status = 'cancelled', updated_at = ?, client_gone_at = NULL
           WHERE run_id = ? AND status = 'running' AND client_gone_at > 0
           AND client_gone_at <= ? RETURNING run_id`,
          now,
          runId,
          now - graceMs,
        ) !== undefined;
      });
    },
  };
}
