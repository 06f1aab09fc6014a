/**
 * `SubscribeToTask`: a task's snapshot, then its frames across turns until it reaches a terminal
 * state, from a client's cursor too (replayed from the retained events of the turns it missed).
 */
import type { RunEventOf, RunStreamItem } from "../../api/events.ts";
import { apiErrorOf, streamAfter } from "../../http/kit/mod.ts";
import type { A2aCall } from "./call.ts";
import { A2aEncoder, type A2aFrame, a2aFrames, type TaskCursor, taskFrameId } from "./encoder.ts";
import { a2aErrors } from "./errors.ts";
import { getTask, latestRun, loadChain, stateName } from "./operations.ts";
import type { Task, TaskState } from "./responses.ts";
import { buildTask, taskState } from "./task.ts";

/**
 * `SubscribeToTask`: the task as it is now, then its live updates until it reaches a terminal
 * state — across turns: when it becomes input-required the stream says so and stays open, and
 * the run answering it continues the same stream. A terminal task cannot be subscribed to
 * (UnsupportedOperationError). Events from the time of subscribing on.
 *
 * With a `cursor` (the id of the last frame the client got from an earlier stream of this task:
 * `Last-Event-ID`), the snapshot is followed by every frame after the cursor, replayed from the
 * retained events of the turn it names and of the turns after it, then the live ones; a task
 * that ended within the retention window gives its remaining frames, to its final state. Frames
 * no longer retained: 410001.
 */
export async function subscribeTask(
  call: A2aCall,
  taskId: string,
  cursor?: TaskCursor,
): Promise<AsyncIterable<A2aFrame>> {
  const { runs } = call.services;
  // Subscribed before the read, so a turn that starts meanwhile is not missed.
  const follower = await runs.followChain(taskId);
  let snapshot: Task;
  const replays: Replay[] = [];
  let contextId: string;
  try {
    const chain = await loadChain(call, taskId);
    const latest = latestRun(chain);
    contextId = latest.session_id;
    if (cursor) {
      const turns = chain.runs.map((r) => r.run.run_id);
      const from = turns.indexOf(cursor.run ?? taskId);
      if (from < 0) {
        throw a2aErrors.invalid(`the cursor names run '${cursor.run}', not a turn of the task`, [{
          field: "Last-Event-ID",
          description: `not a frame id of task '${taskId}'`,
        }]);
      }
      // The turn the cursor is in, from its frame on; the turns after it, whole.
      for (const [i, runId] of turns.slice(from).entries()) {
        const at = i === 0 ? cursor : undefined;
        const after = at ? streamAfter(at) : 0;
        replays.push({
          runId,
          cursor: at,
          events: await runs.attach(call.tenant, runId, { after, fromFirst: true }),
        });
      }
    } else {
      if (!["running", "interrupted"].includes(latest.status)) {
        throw a2aErrors.unsupported(
          `task '${taskId}' is in a terminal state (${stateName(latest.status)}); read it ` +
            `with GetTask`,
          { taskId, state: taskState(latest.status) },
        );
      }
      // The first turn's events are on its own run's channel; later turns' on the chain's.
      if (latest.status === "running" && latest.run_id === taskId) {
        const origin = await runs.attach(call.tenant, taskId).catch((err) => {
          // Finished between the read and the attach: the chain's state below tells how.
          if (apiErrorOf(err)?.code === 409004) return null;
          throw err;
        });
        if (origin) replays.push({ runId: taskId, events: origin });
      }
    }
    // Finished between the read and the attach: read it again.
    const ended = !cursor && replays.length === 0 && latest.status === "running" &&
      latest.run_id === taskId;
    snapshot = ended ? await getTask(call, taskId) : buildTask(chain);
  } catch (err) {
    follower.close();
    throw err;
  }
  return followTask(taskId, contextId, snapshot, replays, follower, !!cursor);
}

/** A turn's events the subscription delivers before the chain's live ones. */
interface Replay {
  runId: string;
  /** The client's cursor in this turn (its events start at the run's first one then). */
  cursor?: TaskCursor;
  events: AsyncIterable<RunStreamItem>;
}

/**
 * The frames of a task subscription; ends at a terminal state or when delivery breaks. `resumed`:
 * the client holds the task up to its cursor, so even a terminal snapshot is followed by the
 * frames it missed.
 */
async function* followTask(
  taskId: string,
  contextId: string,
  snapshot: Task,
  replays: Replay[],
  follower: { events: AsyncIterable<RunStreamItem>; close(): void },
  resumed: boolean,
): AsyncGenerator<A2aFrame> {
  try {
    yield { update: { task: snapshot } };
    if (isTerminal(snapshot.status.state) && !resumed) return;
    // Turns already delivered from their own streams; the chain's channel repeats them.
    const replayed = new Set(replays.map((r) => r.runId));
    for (const replay of replays) {
      let last: RunEventOf<"run_finished"> | undefined;
      for await (
        const frame of a2aFrames(watchEnd(replay.events, (e) => last = e), {
          taskId,
          contextId,
          runId: replay.runId,
          cursor: replay.cursor,
        })
      ) yield frame;
      if (!last) return;
      if (last.status !== "interrupted") return;
    }
    let encoder: A2aEncoder | null = null;
    let runId = taskId;
    for await (const item of follower.events) {
      if ("notice" in item) return;
      const { event } = item;
      if (event.kind === "run_started") runId = event.run_id;
      if (replayed.has(event.kind === "run_finished" ? event.run_id : runId)) continue;
      if (event.kind === "run_started" || !encoder) encoder = new A2aEncoder({ taskId, contextId });
      for (const [part, update] of encoder.encode(event).entries()) {
        yield item.seq === null
          ? { update }
          : { id: taskFrameId(taskId, runId, item.seq, part), update };
      }
      if (event.kind !== "run_finished") continue;
      encoder = null;
      if (event.status !== "interrupted") return;
    }
  } finally {
    follower.close();
  }
}

/** `items` as they are, telling `onEnd` the `run_finished` among them. */
async function* watchEnd(
  items: AsyncIterable<RunStreamItem>,
  onEnd: (event: RunEventOf<"run_finished">) => void,
): AsyncGenerator<RunStreamItem> {
  for await (const item of items) {
    if (!("notice" in item) && item.event.kind === "run_finished") onEnd(item.event);
    yield item;
  }
}

function isTerminal(state: TaskState): boolean {
  return ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"].includes(state);
}
