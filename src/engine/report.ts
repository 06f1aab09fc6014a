/**
 * What the model reported on one run (each step's finish reason and usage, the provider's
 * warnings once each), saved on the run record as the run ends and summed for `run_finished`.
 */
import {
  type FinishReason,
  finishReasonOf,
  modelFields,
  type ModelReport,
  type Usage,
} from "../api/usage.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import type { StepFinish } from "./model_step.ts";

/** A run's model report while it runs. */
export class RunReport {
  readonly #report: ModelReport;

  constructor(
    private readonly store: Pick<Store, "saveModelReport">,
    private readonly runId: string,
    model: { provider: string; model: string },
    private readonly log: Logger,
    /** The attempt writing it: a later attempt's report is never overwritten (fencing). */
    private readonly attempt?: number,
  ) {
    this.#report = { provider: model.provider, model: model.model, steps: [], warnings: [] };
  }

  /** Adds model step `step`: its finish (none when the stream gave none) and its warnings. */
  step(step: number, finish: StepFinish | null, warnings: string[]): void {
    // Each once: the run service writes them on the run's "run finished" log line.
    for (const warning of warnings) {
      if (!this.#report.warnings.includes(warning)) this.#report.warnings.push(warning);
    }
    if (!finish) return;
    this.#report.steps.push({
      step,
      finish_reason: finishReasonOf(finish.reason, finish.raw_reason),
      ...(finish.raw_reason ? { raw_finish_reason: finish.raw_reason } : {}),
      usage: finish.usage,
    });
  }

  /**
   * Saves the report on the run record (nothing when there is nothing to say); returns the
   * run's totals for `run_finished`. A failed write is logged: the run's outcome does not depend
   * on it.
   */
  async save(): Promise<{ usage: Usage | null; finish_reason: FinishReason | null }> {
    const report = this.#report;
    if (report.steps.length > 0 || report.warnings.length > 0) {
      try {
        await this.store.saveModelReport(this.runId, report, this.attempt);
      } catch (error) {
        this.log.error("could not save the model report of the run", { error: String(error) });
      }
    }
    const { usage, finish_reason } = modelFields(report);
    return { usage, finish_reason };
  }
}
