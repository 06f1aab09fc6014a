/**
 * The pub/sub seam: live run events between replicas. It carries live events only; it stores no
 * history and replays nothing (spec).
 */

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
  /** Subscribes; resolves once the subscription is active (messages after it are delivered). */
  subscribe(channel: string): Promise<Subscription>;
  /** Closes connections; open subscriptions end with `closed`. */
  close(): Promise<void>;
}
