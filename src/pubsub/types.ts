/**
 * The pub/sub seam: live run events between replicas, and the history of a run's events kept for
 * a retention window so a client can resume its stream from a cursor. `publish` and `subscribe`
 * are live only (spec: nothing before `subscribe` is delivered); `append` also keeps the message
 * in the channel's history, which `history` reads back.
 */
import type { HistoryPage, Retained } from "./history.ts";

export type { HistoryPage, Retained } from "./history.ts";

/** Why a subscription ended. */
export type SubscriptionEnd =
  | "closed" // the subscriber closed it
  | "overflow" // the subscriber fell `capacity` messages behind
  | "transport_lost"; // the transport (Redis) went away

/** A live subscription to one channel: an async iterable of messages. */
export interface Subscription extends AsyncIterable<string> {
  /** Stops delivery; pending iteration ends. */
  close(): void;
  /** Resolves with the reason once the subscription has ended. */
  readonly ended: Promise<SubscriptionEnd>;
}

/** A publish/subscribe transport. */
export interface PubSub {
  /** `memory` or `redis`. */
  readonly kind: string;
  /** Publishes one message; never waits for subscribers to consume it. */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Keeps `entries` (each a message and its sequence number) in the channel's history, then
   * publishes `message` (the entries as one live message). A reader that subscribes first and
   * reads the history after misses nothing: what was published before the subscription was kept
   * before the read. Never throws; failures go to `onError`. Sequence numbers of a channel are
   * consecutive from 1.
   */
  append(channel: string, entries: Retained[], message: string): Promise<void>;
  /**
   * The channel's history is complete: it is kept for the retention window from now, then
   * dropped. Never throws.
   */
  seal(channel: string): Promise<void>;
  /**
   * The channel's history after sequence number `after`, or null when none is kept for it here
   * (retention off, expired, never written through this transport). Throws
   * `PubSubUnavailable` when the transport is unavailable.
   */
  history(channel: string, after: number): Promise<HistoryPage | null>;
  /** Subscribes; resolves once the subscription is active (messages after it are delivered). */
  subscribe(channel: string): Promise<Subscription>;
  /** Closes connections; open subscriptions end with `closed`. */
  close(): Promise<void>;
}
