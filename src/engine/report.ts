/**
 * What the model reported on one run (each step's finish reason and usage, the provider's
 * warnings once each), saved on the run record after every step and summed for `run_finished`.
 * Saved per step because a step's tokens are spent once it ends, whether or not its replica
 * lives to finish the run: a later attempt goes on from the report the earlier ones saved.
 */
import {
  costOf,
  type FinishReason,
  finishReasonOf,
  modelFields,
  type ModelReport,
  type Price,
  type Usage,
} from "../api/usage.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/mod.ts";
import type { StepFinish } from "./model_step.ts";

/** A run's model report while it runs. */
export class RunReport {
  readonly #report: ModelReport;
  /** Until the earlier attempts' report is read (attempts after the first). */
  #prior: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<Store, "saveModelReport" | "getRun">,
    private readonly run: { tenant_id: string; run_id: string },
    model: { provider: string; model: string },
    private readonly log: Logger,
    private readonly options: {
      /** The attempt writing it: a later attempt's report is never overwritten (fencing). */
      attempt?: number;
      /** The model's price: each step's usage gets its cost. */
      price?: Price | null;
    } = {},
  ) {
    this.#report = { provider: model.provider, model: model.model, steps: [], warnings: [] };
  }

  /** The steps and warnings earlier attempts saved go first (read once, on first use). */
  #carryPrior(): Promise<void> {
    if ((this.options.attempt ?? 1) <= 1) return Promise.resolve();
    this.#prior ??= this.store.getRun(this.run.tenant_id, this.run.run_id).then((record) => {
      this.#report.steps.unshift(...record?.model_steps ?? []);
      this.#report.warnings.unshift(...record?.warnings ?? []);
    }, (error) => {
      this.log.error("could not read the model report of the run's earlier attempts", {
        error: String(error),
      });
    });
    return this.#prior;
  }

  /**
   * Adds model step `step`: its finish (none when the stream gave none) and its warnings, and
   * saves the report.
   */
  async step(step: number, finish: StepFinish | null, warnings: string[]): Promise<void> {
    await this.#carryPrior();
    // Each once: the run service writes them on the run's "run finished" log line.
    for (const warning of warnings) {
      if (!this.#report.warnings.includes(warning)) this.#report.warnings.push(warning);
    }
    if (finish) {
      this.#report.steps.push({
        step,
        finish_reason: finishReasonOf(finish.reason, finish.raw_reason),
        ...(finish.raw_reason ? { raw_finish_reason: finish.raw_reason } : {}),
        usage: finish.usage,
        ...(this.options.price ? { cost: costOf(finish.usage, this.options.price) } : {}),
      });
    }
    await this.#write();
  }

  /**
   * The run's totals for `run_finished`, earlier attempts' steps included (the report is saved
   * already, step by step).
   */
  async totals(): Promise<
    { usage: Usage | null; finish_reason: FinishReason | null; cost: number | null }
  > {
    await this.#carryPrior();
    const { usage, finish_reason, cost } = modelFields(this.#report);
    return { usage, finish_reason, cost };
  }

  /**
   * Saves the report on the run record (nothing when there is nothing to say). A failed write is
   * logged: the run's outcome does not depend on it.
   */
  async #write(): Promise<void> {
    const report = this.#report;
    if (report.steps.length === 0 && report.warnings.length === 0) return;
    try {
      await this.store.saveModelReport(this.run.run_id, report, this.options.attempt);
    } catch (error) {
      this.log.error("could not save the model report of the run", { error: String(error) });
    }
  }
}
