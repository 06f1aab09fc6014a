/** The SQLite store's step records of runs (`GET /v1/runs/{id}/steps`): save one, list a run's. */
import type { RunStep } from "../../api/run_steps.ts";
import { jsonText } from "../rows.ts";
import type { RunStepMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import type { GroupCommit } from "./group_commit.ts";

/** The run step methods of the SQLite store on `conn`. */
export function sqliteRunSteps(conn: Connection, commits: GroupCommit): RunStepMethods {
  return {
    saveRunStep(runId, step, runAttempt) {
      return commits.durable(() => {
        commits.write(() =>
          conn.run(
            `INSERT INTO run_steps (tenant_id, session_id, run_id, step, attempt, trace)
             SELECT tenant_id, session_id, run_id, ?, ?, ? FROM runs
             WHERE run_id = ? AND (? IS NULL OR attempt = ?)
             ON CONFLICT (run_id, step, attempt) DO UPDATE SET trace = excluded.trace`,
            step.step,
            step.attempt,
            jsonText(step),
            runId,
            runAttempt ?? null,
            runAttempt ?? null,
          )
        );
      });
    },

    listRunSteps(tenant, runId) {
      return attempt(() => {
        const run = conn.get(
          "SELECT 1 AS found FROM runs WHERE tenant_id = ? AND run_id = ?",
          tenant,
          runId,
        );
        if (!run) return null;
        return conn.all(
          `SELECT trace FROM run_steps WHERE tenant_id = ? AND run_id = ?
           ORDER BY step, attempt`,
          tenant,
          runId,
        ).map((row) => JSON.parse(row.trace as string) as RunStep);
      });
    },
  };
}
