/**
 * Steering (double texting's `steer`): the messages of a run request join the session's running
 * run at its next step boundary instead of starting a run. The request writes them into the
 * run's inbox in the store (`Store.steerRun`) and wakes the replicas through pub/sub
 * (`STEER_CHANNEL`); the one executing the run takes them into its conversation before its next
 * model step (`RunOptions.steered`, `Store.takeSteering`) and says so with `messages_added`. The
 * request watches the run's stream for that event and answers with the run it joined; when the
 * run ends first (it had answered, was cancelled, or waits for input), the request takes its
 * messages back (`Store.reclaimSteering`) and its caller starts a run with them instead.
 * A missed wake only delays the take to the run's end: the inbox is in the store.
 */
import type { RunStreamItem } from "../api/events.ts";
import type { Run, RunRequest } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import { newMessages, type Store, StoreError } from "../store/mod.ts";
import type { AttachOptions, RunStream } from "./stream.ts";

/** The pub/sub channel of steering wakes: each message is the id of a run with new messages. */
export const STEER_CHANNEL = "steer";

/** What steering needs of the run service. */
export interface SteeringDeps {
  store: Pick<Store, "steerRun" | "reclaimSteering" | "allMessages">;
  pubsub: PubSub;
  log: Logger;
  /** Opens a stream of the run's events (see `RunService.attach`). */
  attach: (tenant: string, runId: string, options: AttachOptions) => Promise<RunStream>;
  /** The sequence number of the run's last event delivered so far. */
  lastSeq: (runId: string) => Promise<number>;
}

/** A run the request's messages joined. */
export interface JoinedRun {
  run_id: string;
  /** The run's events from its `messages_added` of these messages on (close it when unread). */
  events: AsyncGenerator<RunStreamItem>;
}

/**
 * Sends `request`'s messages to `current` (running or queued) and waits until it took them:
 * resolves with the run joined, or null when the run ended without taking them (they are taken
 * back; nothing of them stays). `message_exists` when an id is in the conversation already.
 */
export async function steerRun(
  deps: SteeringDeps,
  tenant: string,
  current: Run,
  request: RunRequest,
): Promise<JoinedRun | null> {
  const { store, pubsub, log, attach, lastSeq } = deps;
  const runId = current.run_id;
  const messages = newMessages(current.session_id, request.messages, runId, Date.now());
  const used = new Set(
    (await store.allMessages(tenant, current.session_id)).map((m) => m.message_id),
  );
  const taken = messages.find((m) => used.has(m.message_id));
  if (taken) {
    throw new StoreError(
      "message_exists",
      taken.message_id,
      `message '${taken.message_id}' exists`,
    );
  }
  const ids = messages.map((m) => m.message_id);

  // Opened before the write: the take (`messages_added`) cannot slip past the stream.
  const stream = await lastSeq(runId).then((after) => attach(tenant, runId, { after }))
    .catch(() => null);
  if (!stream || !(await store.steerRun(tenant, runId, messages))) {
    await stream?.[Symbol.asyncIterator]().return?.();
    return null;
  }
  await pubsub.publish(STEER_CHANNEL, runId).catch((err) => {
    // The run takes them at its end at the latest (or they come back here).
    log.warn("could not wake the steered run", { run_id: runId, error: String(err) });
  });
  const events = stream[Symbol.asyncIterator]();
  while (true) {
    const next = await events.next();
    if (next.done) break;
    const item = next.value;
    if (
      "event" in item && item.event.kind === "messages_added" &&
      item.event.messages.some((m) => m.message_id === ids[0])
    ) {
      log.info("run steered", { tenant, run_id: runId, messages: ids.length });
      return { run_id: runId, events: continued(item, events) };
    }
  }
  const back = await store.reclaimSteering(runId, ids);
  log.info("steered run ended first", { tenant, run_id: runId, reclaimed: back.length });
  if (back.length === 0) {
    // Taken after all (the end of its stream was not heard): the run has them.
    return { run_id: runId, events: continued(null, events) };
  }
  return null;
}

/** `first`, then the rest of `events`. */
async function* continued(
  first: RunStreamItem | null,
  events: AsyncIterator<RunStreamItem>,
): AsyncGenerator<RunStreamItem> {
  try {
    if (first) yield first;
    while (true) {
      const next = await events.next();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await events.return?.();
  }
}

/**
 * Listens for steering wakes of every replica: `wake` is called with each run id. Resolves, once
 * subscribed, with a function that stops listening.
 */
export async function listenForSteering(
  pubsub: PubSub,
  log: Logger,
  wake: (runId: string) => void,
): Promise<() => void> {
  let closed = false;
  let sub = await pubsub.subscribe(STEER_CHANNEL);
  void (async () => {
    while (!closed) {
      for await (const runId of sub) wake(runId);
      if (closed) return;
      // The subscription ended (a lost connection): listen again; runs take what waits at their
      // end at the latest.
      log.warn("steering wakes interrupted; listening again");
      sub = await pubsub.subscribe(STEER_CHANNEL).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return sub;
      });
    }
  })();
  return () => {
    closed = true;
    sub.close();
  };
}
