/**
 * Chains: runs that continue an earlier run (an A2A task's turns), linked to its first run, the
 * chain's origin. The events of every run continuing a chain also go out on the chain's channel,
 * so one subscription follows all of its later turns; ending a chain that waits for input records
 * a run that ends it.
 */
import { makeEvent, type RunStreamItem, type SequencedEvent } from "../api/events.ts";
import type { Run } from "../api/schemas.ts";
import type { Logger } from "../log.ts";
import type { PubSub } from "../pubsub/mod.ts";
import type { LostRun, NewRun, Store } from "../store/mod.ts";
import { decodeRunMessage } from "./channel.ts";
import { newId } from "../ids.ts";

/**
 * The pub/sub channel of the live events of every run continuing the chain of `originRunId` (the
 * origin's own events are on its run channel only), so one subscription follows a chain's turns.
 */
export function chainChannel(originRunId: string): string {
  return `chain:${originRunId}`;
}

/** A run continuing a chain: its origin, and what to keep with the link. */
export type RunLink = NonNullable<NewRun["link"]>;

/** A subscription to a chain's continuing runs; `close` ends it (and `events`). */
export interface ChainFollower {
  /**
   * Their events from the time of subscribing (each with its sequence number in its own run), then
   * an `EndNotice` if delivery breaks.
   */
  events: AsyncIterable<RunStreamItem>;
  /** Ends the subscription. */
  close(): void;
}

/**
 * Follows the runs that continue the chain of `originRunId` from now on (subscribe before
 * reading the chain's state, so no continuation slips between the read and the subscription).
 */
export async function followChain(pubsub: PubSub, originRunId: string): Promise<ChainFollower> {
  const sub = await pubsub.subscribe(chainChannel(originRunId));
  return {
    events: (async function* () {
      try {
        for await (const message of sub) yield* decodeRunMessage(message);
        const why = await sub.ended;
        if (why !== "closed") {
          yield { notice: why === "overflow" ? "subscriber_overflow" : "transport_lost" };
        }
      } finally {
        sub.close();
      }
    })(),
    close: () => sub.close(),
  };
}

/** What ending a chain needs: where runs are recorded and announced, and who records them. */
export interface ChainDeps {
  store: Store;
  pubsub: PubSub;
  /** The replica id recorded as the owner of the run that ends the chain. */
  owner: string;
  log: Logger;
}

/**
 * Ends a chain whose latest run (`latest`, interrupted) waits for input, without going on: a
 * run continuing the chain from `latest`'s checkpoint is recorded `cancelled` at once, without
 * executing anything, and announced to the chain's followers. The session is untouched (a
 * later run closes the waiting calls as unanswered, as after any interrupted run). Fails like
 * any start when the session is busy.
 */
export async function cancelChain(
  deps: ChainDeps,
  tenant: string,
  latest: Run,
  link: RunLink,
): Promise<Run> {
  const runId = newId();
  await deps.store.createRun(tenant, {
    run_id: runId,
    session_id: latest.session_id,
    parent_checkpoint_id: latest.checkpoint_id ?? latest.parent_checkpoint_id,
    owner: deps.owner,
    link,
  });
  const run = await deps.store.finishRun(runId, { status: "cancelled" });
  deps.log.info("chain cancelled while waiting", {
    tenant,
    run_id: runId,
    session_id: run.session_id,
    chain: link.origin_run_id,
  });
  const event = makeEvent("run_finished", {
    session_id: run.session_id,
    run_id: runId,
    status: run.status,
    interrupt_payload: null,
    result: null,
    error: null,
  });
  const item: SequencedEvent = { seq: null, event };
  await deps.pubsub.publish(chainChannel(link.origin_run_id), JSON.stringify(item));
  return run;
}

/**
 * Tells the followers of the chain a lost run continued (if it continued one) how it ended:
 * `message` is the end its own channel got.
 */
export async function announceLostToChain(
  deps: Pick<ChainDeps, "store" | "pubsub">,
  run: LostRun,
  message: string,
): Promise<void> {
  const chain = await deps.store.runChain(run.tenant_id, run.run_id).catch(() => null);
  if (chain && chain.origin_run_id !== run.run_id) {
    await deps.pubsub.publish(chainChannel(chain.origin_run_id), message).catch(() => {});
  }
}
