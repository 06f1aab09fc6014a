/**
 * The Store's ownership of running runs: heartbeats, the sweep of lost runs, the run queue,
 * the cancellation watch and the re-attach grace of clients (see ../types.ts).
 */
import type { RunStatus } from "../../api/schemas.ts";

/** A run whose owner stopped heartbeating, as returned by the sweeper. */
export interface LostRun {
  /** The run's tenant. */
  tenant_id: string;
  /** The run. */
  run_id: string;
  /** The run's session. */
  session_id: string;
  /** The replica that stopped heartbeating. */
  owner: string;
}

/** A lost run another replica took over as its next attempt (`claimLostRuns`). */
export interface ClaimedRun extends LostRun {
  /** The new attempt, now the run's (every later write carries it). */
  attempt: number;
  /** The run's latest checkpoint (null when no step of it ended). */
  checkpoint_id: string | null;
  /** What the run was asked (`NewRun.request`; null when not kept). */
  request: unknown;
  /**
   * The run was queued behind its session's runs (`queueBehind`) and its start is not written:
   * `request` holds its input, which `beginQueued` writes.
   */
  start_pending?: boolean;
  /**
   * The run was handed over (`releaseRun`, a replica's shutdown), not lost with its replica
   * (a crash, a kill, a lease that ran out): absent then. Only `claimLostRuns` says it.
   */
  handed_over?: boolean;
}

/** A queued run a replica took (`claimQueuedRuns`): attempt 1 now, and when it was queued. */
export interface QueuedClaim extends ClaimedRun {
  /** When the run was created (ms since the epoch): its wait is up to the claim. */
  created_at: number;
}

/** What a sweep did: the runs it resumed here, and those out of attempts. */
export interface Claimed {
  /** Runs this replica now owns as a new attempt. */
  resumed: ClaimedRun[];
  /** Runs that ran out of attempts: now `failed` (`attempts_exhausted`). */
  failed: LostRun[];
}

/**
 * The methods of a `Store` that keep running runs owned: heartbeats, the sweep of runs whose
 * owner stopped, and what the owner's cancellation watch listens to or polls.
 */
export interface LeaseMethods {
  /**
   * Calls `listener` with the id of every run cancelled from now on as soon as the store learns of
   * it (PostgreSQL: LISTEN/NOTIFY sent by `cancelRun`). SQLite has no push: it returns at once and
   * never calls; the run service's polling of `runStatuses` covers it. Resolves to an unsubscribe.
   * `onResumed` is called each time the watch is re-established after its connection was lost
   * (cancellations made meanwhile were not heard: the caller polls once).
   */
  watchCancellations(
    listener: (runId: string) => void,
    onResumed?: () => void,
  ): Promise<() => Promise<void>>;
  /** Statuses of the given runs (any tenant), for the owner's cancellation watch. */
  runStatuses(runIds: string[]): Promise<Map<string, RunStatus>>;
  /**
   * Refreshes the heartbeat of the runs this owner executes, each for its attempt. Returns the
   * ids of those another attempt owns now (fenced: the caller stops them).
   */
  heartbeat(owner: string, runs: { run_id: string; attempt: number }[]): Promise<string[]>;
  /**
   * Takes over running runs whose heartbeat is older than `now - leaseMs`: up to `limit` of those
   * with fewer than `maxAttempts` attempts become `owner`'s as their next attempt (`resumed`);
   * those with `maxAttempts` are marked `failed` (`attempts_exhausted`). Concurrent sweepers
   * never claim one run twice.
   */
  claimLostRuns(
    owner: string,
    now: number,
    leaseMs: number,
    maxAttempts: number,
    limit: number,
  ): Promise<Claimed>;
  /**
   * Hands a run back for immediate pick-up (shutdown): its heartbeat is cleared, so the next
   * sweep of any replica claims it. Fenced by `attempt`; false when the attempt no longer owns it.
   */
  releaseRun(runId: string, attempt: number): Promise<boolean>;
  /**
   * Puts a run this owner just created (attempt 1, no step yet) in the run queue: it stays
   * `running` in the store with attempt 0 (`queued` to clients), holding its session, until a
   * replica with a free slot claims it (`claimQueuedRuns`). False when it is not that run any more
   * (cancelled meanwhile).
   */
  queueRun(runId: string): Promise<boolean>;
  /**
   * Takes up to `limit` queued runs for `owner` as their first attempt, one at a time by tenant:
   * the head (oldest) queued run of the tenant with the fewest runs executing now, oldest head
   * first among equals, so a tenant's flood never waits another tenant's next run longer than
   * one slot. A run is passed over while its session has another unfinished run that is earlier
   * or whose start is written (runs of one session start one at a time, in the order they were
   * queued). Concurrent claimers never take one run twice (PostgreSQL `FOR UPDATE SKIP LOCKED`;
   * SQLite under its write lock). `owner` in each claimed run is the new one; `created_at` (ms)
   * tells how long it waited. With `tenantMaxRunning`, a tenant executing that many runs (over all
   * replicas) is passed over: its queued runs wait until one of its runs ends.
   */
  claimQueuedRuns(owner: string, limit: number, tenantMaxRunning?: number): Promise<QueuedClaim[]>;
  /** Runs waiting in the run queue, over all tenants. */
  queueDepth(): Promise<number>;
  /**
   * The tenant's unfinished runs over all replicas: executing (`running`, attempt ≥ 1) and
   * waiting in the run queue (`queued`), for the per-tenant limits.
   */
  tenantRunCounts(tenant: string): Promise<{ running: number; queued: number }>;
}

/** The methods of a `Store` for the re-attach grace of `on_disconnect = "cancel"`. */
export interface ClientGoneMethods {
  /**
   * Marks a running run whose attached client went away (`on_disconnect = "cancel"`): it waits
   * for a client to re-attach (`clientReattached`) before `cancelIfClientGone` cancels it. False
   * when the run is not running, or a client attached to its events already (in whichever order
   * the two were heard: a server may notice a broken connection long after its client came back).
   */
  clientGone(runId: string): Promise<boolean>;
  /**
   * A client attached to the running run's events (any replica): it waits for no client any more
   * (the mark of `clientGone` is cleared, and a later one is refused).
   */
  clientReattached(runId: string): Promise<void>;
  /**
   * Cancels the run, like `cancelRun`, only while it is running and marked by `clientGone` at
   * least `graceMs` ago (no client re-attached since; a later mark, by the replica that resumed
   * it, gets its own grace). True when it cancelled it.
   */
  cancelIfClientGone(runId: string, graceMs: number): Promise<boolean>;
}
