/**
 * The run queue of one replica (`runtime.runs.max_concurrent`): the slots this replica executes
 * runs in, and the store's queue of detached runs waiting for a slot of any replica. A start
 * takes a slot (`withSlot`) or, when none is free, its run is queued (`enqueue`); whenever a slot
 * may have freed (a run ended here, every poll) the replica takes queued runs while it has free
 * slots (`fill`), each executed like a claimed run.
 */
import type { Logger } from "../log.ts";
import type { QueuedClaim, Store } from "../store/mod.ts";
import { runServiceErrors } from "./errors.ts";

/** What the queue needs of the run service. */
export interface RunQueueOptions {
  store: Pick<Store, "queueRun" | "claimQueuedRuns" | "queueDepth" | "tenantRunCounts">;
  log: Logger;
  replicaId: string;
  /** Runs this replica executes at once. */
  maxConcurrent: number;
  /** Unfinished runs (executing or queued) a tenant may have over all replicas. */
  tenantMaxRuns?: number;
  /** Runs a tenant may execute at once over all replicas; more wait in the queue. */
  tenantMaxRunning?: number;
  /** Runs a tenant may have waiting in the queue. */
  tenantMaxQueued?: number;
  /** How often the store's queue is looked at (`runtime.replica.poll_interval`). */
  pollInterval: number;
  /** Runs executing here now. */
  running: () => number;
  /** False once shutdown began: nothing more is taken. */
  accepting: () => boolean;
  /** Executes a queued run this replica took, as its first attempt. */
  execute: (run: QueuedClaim) => void;
}

/** A replica's slots and its part in the store's run queue. */
export class RunQueue {
  /** Slots taken by starts and claims not yet running. */
  #reserved = 0;
  /** Whether `fill` runs, and whether it should look again once done. */
  #filling = false;
  #fillAgain = false;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: RunQueueOptions) {}

  /** Starts the poll, and takes what waits already. */
  open(): void {
    this.#timer = setInterval(() => void this.#poll(), this.options.pollInterval);
    this.fill();
  }

  /** Stops the poll (shutdown). */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** Whether every slot is taken (a start now is queued, or refused when attached). */
  get full(): boolean {
    return this.options.running() + this.#reserved >= this.options.maxConcurrent;
  }

  /**
   * Whether a start of `tenant` waits in the queue whatever this replica's slots (`waits`): the
   * tenant executes `tenantMaxRunning` runs (or has runs waiting for that, which go first).
   * Refuses it (`tenant_limit`) beyond the tenant's limits: its unfinished runs at
   * `tenantMaxRuns`, or, when it would wait (every slot taken, or `behind` its session's runs,
   * double texting's `enqueue`), its queued runs at `tenantMaxQueued`. The counts are
   * read before the run is written, so starts at the same moment may pass a limit by as many as
   * start together.
   */
  async admit(tenant: string, behind = false): Promise<boolean> {
    const { tenantMaxRuns, tenantMaxQueued, tenantMaxRunning } = this.options;
    const full = behind || this.waits;
    const counted = tenantMaxRuns !== undefined || tenantMaxRunning !== undefined ||
      (tenantMaxQueued !== undefined && full);
    if (!counted) return false;
    const { running, queued } = await this.options.store.tenantRunCounts(tenant);
    if (tenantMaxRuns !== undefined && running + queued >= tenantMaxRuns) {
      throw runServiceErrors.tenantLimit(
        tenant,
        `tenant '${tenant}' has ${running + queued} unfinished runs, its limit ` +
          "(runtime.runs.tenant_max_runs)",
      );
    }
    const capped = tenantMaxRunning !== undefined && (running >= tenantMaxRunning || queued > 0);
    if ((full || capped) && tenantMaxQueued !== undefined && queued >= tenantMaxQueued) {
      throw runServiceErrors.tenantLimit(
        tenant,
        `tenant '${tenant}' has ${queued} runs waiting in the run queue, its limit ` +
          "(runtime.runs.tenant_max_queued)",
      );
    }
    return capped;
  }

  /**
   * Whether a start now waits in the queue: every slot is taken. Read it in the same turn as the
   * `withSlot` that follows, or another start can take the slot between. (A start while queued
   * runs are being taken into other free slots does not wait for them: waiting whenever a run
   * ended here would queue, and say `run_queued` to, attached runs that have a slot.)
   */
  get waits(): boolean {
    return this.full;
  }

  /**
   * Runs `start` holding a slot, so concurrent starts never exceed the limit; the slot is the
   * run's once `start` has made it one of the `running`.
   */
  async withSlot<T>(start: () => Promise<T>): Promise<T> {
    this.#reserved++;
    try {
      return await start();
    } finally {
      this.#reserved--;
    }
  }

  /**
   * Queues a run whose start boundary is written: it waits in the store for a free slot of any
   * replica (unless it was cancelled meanwhile).
   */
  async enqueue(run: { tenant_id: string; run_id: string }): Promise<void> {
    const queued = await this.options.store.queueRun(run.run_id);
    this.options.log.info("run queued", { tenant: run.tenant_id, run_id: run.run_id, queued });
    // A slot may have freed while it was written.
    this.fill();
  }

  /**
   * Takes queued runs (this replica's and others') while this replica has free slots. Called
   * when a run ends here and every poll; a call while one runs makes it look once more.
   */
  fill(): void {
    if (this.#filling) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = true;
    void this.#take().finally(() => {
      this.#filling = false;
    });
  }

  async #take(): Promise<void> {
    const { store, log, replicaId, maxConcurrent, running, accepting, execute } = this.options;
    const cap = this.options.tenantMaxRunning;
    try {
      do {
        this.#fillAgain = false;
        // One run per claim, its slot reserved meanwhile: a start during the claim sees it. The
        // run is executing (one of `running`) before the reservation ends, so no start slips
        // between the two.
        while (maxConcurrent - running() - this.#reserved > 0 && accepting()) {
          const run = await this.withSlot(async () => {
            const [claimed] = await store.claimQueuedRuns(replicaId, 1, cap);
            if (!claimed) return undefined;
            log.info("queued run started", {
              tenant: claimed.tenant_id,
              run_id: claimed.run_id,
              waited_ms: Math.max(0, Date.now() - claimed.created_at),
            });
            execute(claimed);
            return claimed;
          });
          if (!run) break;
        }
      } while (this.#fillAgain);
    } catch (err) {
      log.warn("could not take queued runs", { error: String(err) });
    }
  }

  /**
   * The poll: counts what waits (the depth metric), and takes what fits when anything does (a
   * count is lighter than a claim, which writes).
   */
  async #poll(): Promise<void> {
    const depth = await this.options.store.queueDepth().catch((err) => {
      this.options.log.warn("could not count queued runs", { error: String(err) });
      return 1;
    });
    if (depth > 0) this.fill();
  }
}
