/**
 * Read models of sessions and runs for the protocol add-ons: what a session holds now and what a
 * run left behind. The add-ons ask the run service for these instead of reading the store, so a
 * rule such as which tool calls still wait lives in one place (the engine's).
 */
import type { Message, Run } from "../api/schemas.ts";
import { waitingToolCalls } from "../engine/mod.ts";
import type { PendingToolCall } from "../engine/mod.ts";
import type { Store } from "../store/mod.ts";

/** A session as a new run would continue it. */
export interface SessionState {
  /** The conversation, oldest first. */
  messages: Message[];
  /** The latest checkpoint's id (null before the first one). */
  checkpoint_id: string | null;
  /** The latest checkpoint's context. */
  context: Record<string, unknown> | null;
  /** The run that wrote the latest checkpoint: the one whose pending calls a new run resumes. */
  run: Run | null;
  /** The tool calls of the latest checkpoint that still wait for an answer. */
  pending: PendingToolCall[];
}

/** What a session holds now, or null when the tenant has no such session. */
export async function sessionState(
  store: Store,
  tenant: string,
  sessionId: string,
): Promise<SessionState | null> {
  if (!(await store.getSession(tenant, sessionId))) return null;
  const [messages, checkpoint] = await Promise.all([
    store.allMessages(tenant, sessionId),
    store.latestCheckpoint(tenant, sessionId),
  ]);
  const run = checkpoint?.run_id ? await store.getRun(tenant, checkpoint.run_id) : null;
  return {
    messages,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    context: checkpoint?.state.context ?? null,
    run,
    pending: waitingToolCalls(checkpoint?.state.pending_tool_calls ?? [], messages),
  };
}

/** A run with what it left: the messages it added and the context it ends with. */
export interface RunState {
  run: Run;
  /** The messages of the session this run wrote, oldest first. */
  messages: Message[];
  /** A completed run's `result.context`, else the context of its latest checkpoint. */
  context: Record<string, unknown> | null;
}

/** What a run left behind, or null when the tenant has no such run. */
export async function runState(
  store: Store,
  tenant: string,
  runId: string,
): Promise<RunState | null> {
  const run = await store.getRun(tenant, runId);
  if (!run) return null;
  const [messages, context] = await Promise.all([
    store.allMessages(tenant, run.session_id),
    runContext(store, tenant, run),
  ]);
  return { run, messages: messages.filter((m) => m.run_id === run.run_id), context };
}

/**
 * The context a run leaves: a completed run's `result.context`, else the context of its latest
 * checkpoint (or of the one it started from, when it wrote none).
 */
async function runContext(
  store: Store,
  tenant: string,
  run: Run,
): Promise<Record<string, unknown> | null> {
  const result = run.result as { context?: unknown } | null;
  if (run.status === "completed" && result && typeof result === "object" && "context" in result) {
    return (result.context as Record<string, unknown> | null) ?? null;
  }
  const id = run.checkpoint_id ?? run.parent_checkpoint_id;
  if (!id) return null;
  const checkpoint = await store.getCheckpoint(tenant, run.session_id, id);
  return checkpoint?.state.context ?? null;
}

/** One run of a chain with what its link keeps and the messages it added. */
export interface ChainRunState {
  run: Run;
  /** What the caller kept with the link (null for the origin). */
  note: unknown;
  /** The messages of the session's conversation this run wrote, oldest first. */
  messages: Message[];
}

/** A chain of runs (the runs continuing an origin run) with what each left. */
export interface ChainState {
  origin_run_id: string;
  /** Oldest first; the last is the chain's latest run. */
  runs: ChainRunState[];
  /** The context the latest run leaves (see `runContext`). */
  context: Record<string, unknown> | null;
}

/** The chain of a run (from any of its runs), or null when the tenant has no such run. */
export async function chainState(
  store: Store,
  tenant: string,
  runId: string,
): Promise<ChainState | null> {
  const chain = await store.runChain(tenant, runId);
  if (!chain) return null;
  const latest = chain.runs[chain.runs.length - 1].run;
  const [messages, context] = await Promise.all([
    store.allMessages(tenant, latest.session_id),
    runContext(store, tenant, latest),
  ]);
  const byRun = Map.groupBy(messages, (m) => m.run_id);
  return {
    origin_run_id: chain.origin_run_id,
    runs: chain.runs.map(({ run, note }) => ({ run, note, messages: byRun.get(run.run_id) ?? [] })),
    context,
  };
}
