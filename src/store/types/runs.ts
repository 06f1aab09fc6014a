/**
 * The Store's runs: their start, steps, steering inbox, queue behind a session, outcome and step records, and
 * chains of runs (see ../types.ts).
 */
import type { ModelReport } from "../../api/usage.ts";
import type { RunStep } from "../../api/run_steps.ts";
import type { Message, Page, Run, RunStatus } from "../../api/schemas.ts";
import type { CheckpointData, CheckpointHead } from "./checkpoints.ts";
import type { PageQuery } from "./page.ts";

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

/** The methods of a `Store` that start, read, commit, finish and cancel runs. */
export interface RunMethods {
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
}

/** The methods of a `Store` on the step records of runs. */
export interface RunStepMethods {
  /**
   * Keeps what step `step.step` of a run did (`GET /v1/runs/{id}/steps`), one record per step and
   * attempt (written again, it replaces that attempt's). With `attempt`, only while that attempt
   * owns the run. Nothing when the run does not exist.
   */
  saveRunStep(runId: string, step: RunStep, attempt?: number): Promise<void>;
  /** The steps of a run of the tenant, in step then attempt order; null without such a run. */
  listRunSteps(tenant: string, runId: string): Promise<RunStep[] | null>;
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

/** The methods of a `Store` on chains of runs. */
export interface ChainMethods {
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
}
