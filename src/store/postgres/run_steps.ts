/** The PostgreSQL store's step records of runs (`GET /v1/runs/{id}/steps`): save one, list a run's. */
import type postgres from "postgres";
import type { RunStep } from "../../api/run_steps.ts";
import { jsonText } from "../rows.ts";
import type { RunStepMethods } from "../types.ts";

/** The run step methods of the PostgreSQL store on `sql`. */
export function postgresRunSteps(sql: postgres.Sql): RunStepMethods {
  return {
    async saveRunStep(runId, step, attempt) {
      await sql`INSERT INTO run_steps (tenant_id, session_id, run_id, step, attempt, trace)
        SELECT tenant_id, session_id, run_id, ${step.step}, ${step.attempt},
          ${jsonText(step)}::text::jsonb
        FROM runs
        WHERE run_id = ${runId}
          AND (${attempt ?? null}::integer IS NULL OR attempt = ${attempt ?? null}::integer)
        ON CONFLICT (run_id, step, attempt) DO UPDATE SET trace = excluded.trace`;
    },

    async listRunSteps(tenant, runId) {
      const [run] = await sql`SELECT 1 AS found FROM runs
        WHERE tenant_id = ${tenant} AND run_id = ${runId}`;
      if (!run) return null;
      const rows = await sql`SELECT trace FROM run_steps
        WHERE tenant_id = ${tenant} AND run_id = ${runId} ORDER BY step, attempt`;
      return rows.map((row) =>
        (typeof row.trace === "string" ? JSON.parse(row.trace) : row.trace) as RunStep
      );
    },
  };
}
