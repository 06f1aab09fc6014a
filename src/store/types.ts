// Over 400 lines: the Store seam is one interface with the record types its methods take.
/**
 * The Store seam: everything durable (sessions, messages, runs, checkpoints), tenant-scoped.
 * Two implementations: SQLite (`node:sqlite`, the embedded default) and PostgreSQL (`postgres`).
 * Both pass the one contract suite in tests/store/contract.ts. Client mistakes are thrown as
 * `StoreError`s (./errors.ts), never as HTTP errors.
 */
import type { ModelReport, Usage } from "../api/usage.ts";
import type { RunStep } from "../api/run_steps.ts";
import type {
  Checkpoint,
  CheckpointState,
  Message,
  MessageInput,
  Page,
  Run,
  RunStatus,
  Session,
} from "../api/schemas.ts";

/** Paging of a list call: page size and the opaque cursor from a previous page. */
export interface PageQuery {
  /** Largest number of records on the page. */
  per_page: number;
  /** `next_page` of the previous page; one the store cannot decode is `invalid_cursor`. */
  page?: string | null;
}

/** Filters of `GET /v1/sessions/{id}/runs`; times are epoch milliseconds. */
export interface RunFilter {
  /** Only these run ids. */
  ids?: string[];
  /** Only runs of these sessions. */
  session_ids?: string[];
  /** Only runs with these statuses. */
  statuses?: RunStatus[];
  /** Created strictly before this time. */
  created_before?: number;
  /** Created strictly after this time. */
  created_after?: number;
  /** Updated strictly before this time. */
  updated_before?: number;
  /** Updated strictly after this time. */
  updated_after?: number;
}

/** What a new run row holds, and what the run starts with (one transaction). */
export interface NewRun {
  /** The new run's id. */
  run_id: string;
  /** The session it runs in. */
  session_id: string;
  /** The checkpoint it starts from (null for a session's first run). */
  parent_checkpoint_id: string | null;
  /** Replica id of the process that executes the run. */
  owner: string;
  /**
   * Create the session when it does not exist, in the run's transaction: a refused run (409)
   * leaves no session behind.
   */
  create_session?: boolean;
  /**
   * The session's conversation clock the run was planned against (`RunStart.clock`; 0 for a new
   * session). When the conversation changed since, the call rejects with `ConversationChanged`
   * and writes nothing.
   */
  expect_clock?: number;
  /**
   * Restores the conversation to this checkpoint's before the messages are appended (a fork):
   * messages added since leave the conversation, messages removed since come back in place.
   * `checkpoint_not_found` when the session has no such checkpoint.
   */
  fork_checkpoint_id?: string | null;
  /** Messages the run starts with, appended to the conversation as they are. */
  messages?: Message[];
  /**
   * The run continues the chain of `origin_run_id`, a run of the same session (see
   * `runChain`); the link is written in the run's transaction, with `note` (any JSON the caller
   * keeps with it).
   */
  link?: { origin_run_id: string; note?: unknown };
  /**
   * What the run was asked, kept so another replica can resume it (`ClaimedRun.request`); the
   * input messages are left out (the conversation holds them).
   */
  request?: unknown;
}

/** The terminal outcome of a run. */
export interface RunOutcome {
  /** The terminal status. */
  status: Exclude<RunStatus, "running">;
  /** A completed run's result. */
  result?: unknown;
  /** What an interrupted run waits for. */
  interrupt_payload?: Record<string, unknown> | null;
  /** Why a run failed or was interrupted. */
  error?: Run["error"];
}

/** The state a checkpoint holds besides its conversation. */
export type CheckpointData = Omit<CheckpointState, "messages">;

/**
 * One step boundary of a run: the messages the step added (records made by the engine, stored as
 * they are) and the checkpoint after them. The checkpoint references the conversation at its
 * moment; it never copies it.
 */
export interface StepCommit {
  /** The run's tenant. */
  tenant_id: string;
  /** The run's session. */
  session_id: string;
  /** The run. */
  run_id: string;
  /**
   * The attempt that writes (fencing): the write is refused with `RunFenced` once the run's
   * attempt moved on or the run is neither running nor cancelled. Omitted: not fenced.
   */
  attempt?: number;
  /** The messages the step adds to the conversation. */
  messages: Message[];
  /** The checkpoint that ends the step; null when the step only adds messages. */
  checkpoint: {
    /** A new id (UUID) for the checkpoint. */
    checkpoint_id: string;
    parent_id: string | null;
    state: CheckpointData;
  } | null;
}

/** A checkpoint without its conversation. */
export interface CheckpointHead {
  /** The checkpoint's id. */
  checkpoint_id: string;
  /** The run that wrote it (null for one written outside a run). */
  run_id: string | null;
  /** The checkpoint before it in the session. */
  parent_id: string | null;
  /** What it saves. */
  state: CheckpointData;
}

/** What a run starts from, read in one consistent snapshot. */
export interface RunStart {
  /**
   * The session's conversation clock (for `NewRun.expect_clock`); null when there is no
   * session.
   */
  clock: number | null;
  /** The checkpoint the run continues from: the named one, else the latest; null when none. */
  checkpoint: CheckpointHead | null;
  /** The conversation: the named checkpoint's, else the session's current one, oldest first. */
  messages: Message[];
}

/** A run of a chain, with the note its link keeps (null for the origin). */
export interface ChainedRun {
  /** The run. */
  run: Run;
  /** What its link keeps (null for the origin). */
  note: unknown;
}

/** A chain of runs: the first run and each run linked to it, oldest first. */
export interface RunChain {
  /** The chain's first run (the A2A task id). */
  origin_run_id: string;
  /** Every run of the chain, oldest first. */
  runs: ChainedRun[];
}

/** Filters of `listChains`, applied to each chain's latest run; times are epoch ms. */
export interface ChainFilter {
  /** Only chains of this session. */
  session_id?: string;
  /** Only chains whose latest run has one of these statuses. */
  statuses?: RunStatus[];
  /** The latest run changed at or after this time. */
  updated_since?: number;
}

/** A chain as `listChains` lists it: its origin and its latest run. */
export interface ChainHead {
  /** The chain's first run. */
  origin_run_id: string;
  /** Its latest run. */
  run: Run;
}

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
}

/** A run queued behind its session's unfinished runs (`queueBehind`). */
export interface QueuedRun {
  /** The new run's id. */
  run_id: string;
  /** The session, which exists (its unfinished run is in it). */
  session_id: string;
  /** The replica that queued it. */
  owner: string;
  /** The whole request, input included: written into the conversation when it starts. */
  request: unknown;
}

/** The start of a run claimed with its start pending (`beginQueued`), fenced by its attempt. */
export interface QueuedStart extends StepCommit {
  /** The attempt that claimed it (fencing). */
  attempt: number;
  /** The checkpoint it starts from. */
  parent_checkpoint_id: string | null;
  /** What it was asked, without its input (now in the conversation). */
  request: unknown;
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

/** Durable storage of sessions, messages, runs and checkpoints. */
export interface Store {
  /** `sqlite` or `postgres`. */
  readonly kind: "sqlite" | "postgres";
  /**
   * Runs the versioned migrations (idempotent; safe when two replicas start at once); resolves
   * with the ones this call applied, as `0005_durable_run_commits`.
   */
  migrate(): Promise<readonly string[]>;
  /** Resolves when the store answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Releases connections and file handles. */
  close(): Promise<void>;

  // Sessions
  /** Creates a session; `StoreError` `session_exists` when the id exists in the tenant. */
  createSession(
    tenant: string,
    input: { session_id?: string | null; metadata?: Record<string, unknown> | null },
  ): Promise<Session>;
  /** The tenant's session, or null. */
  getSession(tenant: string, sessionId: string): Promise<Session | null>;
  /**
   * The tokens the session's runs used, the sum of their model steps' usage (null when no run
   * reported a step), and their cost (null when no step had a price), summed by the database
   * over the runs' stored reports.
   */
  sessionTotals(
    tenant: string,
    sessionId: string,
  ): Promise<{ usage: Usage | null; cost: number | null }>;
  /** A page of the tenant's sessions, oldest first. */
  listSessions(tenant: string, page: PageQuery): Promise<Page<Session>>;
  /**
   * Deletes a session with its messages, runs and checkpoints. `StoreError` `session_not_found`
   * when absent, `session_busy` while one of its runs is running.
   */
  deleteSession(tenant: string, sessionId: string): Promise<void>;

  // Messages (the session's current conversation, in order)
  /**
   * Appends messages to an existing session (`session_not_found` otherwise), generating missing
   * ids; a `message_id` already used in the conversation is `message_exists`. While a run is
   * running in the session it is `session_busy`: the check and the write are one transaction, so
   * a run starting meanwhile cannot slip between them. (A run writes its own messages with
   * `createRun`, `commitStep` and `finishRun`.)
   */
  appendMessages(tenant: string, sessionId: string, messages: MessageInput[]): Promise<Message[]>;
  /** A page of the session's conversation, oldest first (`session_not_found` without it). */
  listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>>;
  /** The whole conversation of a session, oldest first. */
  allMessages(tenant: string, sessionId: string): Promise<Message[]>;
  /** One message of the session's conversation, or null. */
  getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null>;
  /**
   * Removes a message from the conversation (checkpoints that saw it keep it); true when there
   * was one. `session_busy` (checked in the transaction) while a run is running.
   */
  deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean>;

  // Runs
  /**
   * The start boundary of a run, one transaction: creates the session when asked, restores a
   * fork's conversation, inserts the running run and appends its input messages. The session
   * must exist unless `create_session` (`session_not_found`); `StoreError` `run_exists` when the
   * run id exists (in any tenant), `session_busy` when the session already has a running run,
   * `message_exists` for a used message id; `ConversationChanged` (see `expect_clock`).
   */
  createRun(tenant: string, run: NewRun): Promise<Run>;
  /**
   * What a run starts from: the session's clock, the checkpoint (`checkpointId`, else the
   * latest) and the conversation it sees. Reads one conversation and one checkpoint row, whatever
   * the number of checkpoints.
   */
  readStart(tenant: string, sessionId: string, checkpointId?: string | null): Promise<RunStart>;
  /** The tenant's run, or null (another tenant's run is not found). */
  getRun(tenant: string, runId: string): Promise<Run | null>;
  /** A page of the session's runs matching `filter`, oldest first. */
  listRuns(
    tenant: string,
    sessionId: string,
    filter: RunFilter,
    page: PageQuery,
  ): Promise<Page<Run>>;
  /**
   * The chain a run belongs to: its origin (the run itself unless a link names another) and the
   * origin's runs, oldest first. Null when the tenant has no such run.
   */
  runChain(tenant: string, runId: string): Promise<RunChain | null>;
  /**
   * The tenant's chains (a run with no link and the runs linked to it count once, as the latest of
   * them), filtered on that latest run, most recently updated first; `count` counts every match.
   */
  listChains(tenant: string, filter: ChainFilter, page: PageQuery): Promise<Page<ChainHead>>;
  /**
   * A step boundary of a running run, one transaction: appends the step's messages and writes its
   * checkpoint, which becomes the run's `checkpoint_id` (and moves its `updated_at`).
   * `session_not_found` without the session, `session_busy` while another run of the session is
   * running, `message_exists` on a used message id.
   */
  commitStep(step: StepCommit): Promise<void>;
  /**
   * The end boundary of a run, one transaction: writes `last` (its last step, as `commitStep`)
   * whatever the run's status, then moves a running run to its outcome (compare-and-set on
   * `running`). Returns the updated run, or the unchanged run when it was no longer running
   * (cancelled, or failed by a sweep, meanwhile). When `last` cannot be written nothing is. With `attempt`
   * it is fenced (see `StepCommit.attempt`): `RunFenced` once another attempt owns the run.
   */
  finishRun(
    runId: string,
    outcome: RunOutcome,
    last?: StepCommit | null,
    attempt?: number,
  ): Promise<Run>;
  /**
   * Keeps what the model reported on a run (usage, finish reasons, warnings) on its record,
   * whatever its status; written once, as the run ends, before its outcome. With `attempt`, only
   * while that attempt owns the run (a paused replica never overwrites a later attempt's).
   */
  saveModelReport(runId: string, report: ModelReport, attempt?: number): Promise<void>;
  /**
   * Keeps what step `step.step` of a run did (`GET /v1/runs/{id}/steps`), one record per step and
   * attempt (written again, it replaces that attempt's). With `attempt`, only while that attempt
   * owns the run. Nothing when the run does not exist.
   */
  saveRunStep(runId: string, step: RunStep, attempt?: number): Promise<void>;
  /** The steps of a run of the tenant, in step then attempt order; null without such a run. */
  listRunSteps(tenant: string, runId: string): Promise<RunStep[] | null>;
  /**
   * Puts messages (records of the run, `run_id` set) in a running (or queued) run's steering
   * inbox, after those already waiting, for the run to take at its next step boundary
   * (`takeSteering`). False, writing nothing, when the tenant's run is not running.
   */
  steerRun(tenant: string, runId: string, messages: Message[]): Promise<boolean>;
  /**
   * Takes what waits in the run's steering inbox, one transaction: appends the messages to the
   * session's conversation (as `commitStep` would, fenced by `step.attempt`) and empties the
   * inbox. Resolves with the messages taken, oldest first (none: nothing written).
   */
  takeSteering(step: Omit<StepCommit, "messages" | "checkpoint">): Promise<Message[]>;
  /**
   * Takes back, from the steering inbox of a run that is no longer running (it ended before
   * taking them), those of the messages `messageIds` that still wait there, resolving with them;
   * none while the run runs.
   */
  reclaimSteering(runId: string, messageIds: string[]): Promise<Message[]>;
  /**
   * Cancels a running run of the tenant (no change when terminal). Returns the run after the
   * call, or null when the tenant has no such run.
   */
  cancelRun(tenant: string, runId: string): Promise<Run | null>;
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
   * Stores a run queued (attempt 0) behind the unfinished runs of its session, its start pending:
   * nothing of it enters the conversation until a replica claims it, which no replica does while
   * an earlier run of its session is unfinished (`claimQueuedRuns`). `run_exists` when the run
   * id is taken, `session_not_found` without the session.
   */
  queueBehind(tenant: string, run: QueuedRun): Promise<Run>;
  /**
   * Writes the start of a claimed run whose start was pending: its input messages into the
   * conversation, the checkpoint it starts from and its request without input, in one
   * transaction fenced by `attempt` (`RunFenced`).
   */
  beginQueued(start: QueuedStart): Promise<void>;
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

  // Checkpoints (records with the conversation of their moment)
  /** One checkpoint of the session, or null. */
  getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null>;
  /** The most recently created checkpoint of the session. */
  latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null>;
  /** A page of the session's checkpoints, oldest first. */
  listCheckpoints(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Checkpoint>>;
}

/** The session methods of a `Store` (each implementation builds its store from such parts). */
export type SessionMethods = Pick<
  Store,
  "createSession" | "getSession" | "sessionTotals" | "listSessions" | "deleteSession"
>;

/** The methods of a `Store` on a session's current conversation. */
export type MessageMethods = Pick<
  Store,
  "appendMessages" | "listMessages" | "allMessages" | "getMessage" | "deleteMessage"
>;

/** The methods of a `Store` that start, read, commit, finish and cancel runs. */
export type RunMethods = Pick<
  Store,
  | "createRun"
  | "readStart"
  | "getRun"
  | "listRuns"
  | "commitStep"
  | "finishRun"
  | "saveModelReport"
  | "steerRun"
  | "takeSteering"
  | "reclaimSteering"
  | "cancelRun"
  | "queueBehind"
  | "beginQueued"
>;

/** The methods of a `Store` on the step records of runs. */
export type RunStepMethods = Pick<Store, "saveRunStep" | "listRunSteps">;

/** The methods of a `Store` on chains of runs. */
export type ChainMethods = Pick<Store, "runChain" | "listChains">;

/**
 * The methods of a `Store` that keep running runs owned: heartbeats, the sweep of runs whose
 * owner stopped, and what the owner's cancellation watch listens to or polls.
 */
export type LeaseMethods = Pick<
  Store,
  | "watchCancellations"
  | "runStatuses"
  | "heartbeat"
  | "claimLostRuns"
  | "releaseRun"
  | "queueRun"
  | "claimQueuedRuns"
  | "queueDepth"
  | "tenantRunCounts"
>;

/** The methods of a `Store` for the re-attach grace of `on_disconnect = "cancel"`. */
export type ClientGoneMethods = Pick<
  Store,
  "clientGone" | "clientReattached" | "cancelIfClientGone"
>;

/** The checkpoint methods of a `Store`. */
export type CheckpointMethods = Pick<
  Store,
  "getCheckpoint" | "latestCheckpoint" | "listCheckpoints"
>;
