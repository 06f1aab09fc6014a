/**
 * What both connections of the Redis transport share (the publisher in redis.ts, the subscriber
 * in redis_subscriber.ts): its settings, how a node-redis client is made (no offline queue, no
 * reconnect of its own), and a bounded wait for a reply.
 */
import { createClient } from "redis";
import type { HistorySettings } from "./history.ts";

/** A node-redis client. */
export type Client = ReturnType<typeof createClient>;

/** The Redis transport's settings, defaults applied. */
export interface RedisSettings {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /** Undelivered messages one subscriber may hold before it is closed with `overflow`. */
  capacity: number;
  /** Prefix of every channel name. */
  prefix: string;
  /** Receives what the transport absorbs instead of throwing. */
  onError: (err: unknown) => void;
  /** Milliseconds a publish may wait for Redis before it is dropped. */
  publishTimeoutMs: number;
  /** Milliseconds between liveness pings on the subscriber connection. */
  heartbeatMs: number;
  /** Milliseconds to establish a connection. */
  connectTimeoutMs: number;
  /** The history `append` keeps. */
  history: HistorySettings;
}

/** A client that fails at once while disconnected and never reconnects by itself. */
export function newClient(s: RedisSettings): Client {
  return createClient({
    url: s.url,
    // Fail commands at once while disconnected instead of queueing them for a reconnect.
    disableOfflineQueue: true,
    socket: { reconnectStrategy: false, connectTimeout: s.connectTimeoutMs },
    // No timeout of node-redis's own: every command is waited for under ours (`withTimeout`).
    // node-redis 6 gives each command an `AbortSignal.timeout(5000)` by default, which cannot be
    // cleared: it fires 5 s after every command, done or not, and builds a DOMException with its
    // stack (2.3 % of the server's CPU at 100 paced streams on PostgreSQL + Redis).
    commandOptions: { timeout: 0 },
  });
}

/** Redis gave no reply within the time allowed. */
export class TimeoutError extends Error {
  /** The wait of `ms` that ran out. */
  constructor(ms: number) {
    super(`no reply from Redis within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

/** Races `promise` against a timer that is always cleared, so no timer outlives the call. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
