/**
 * Live run events between the replicas of a deployment: the public surface of `src/pubsub/`.
 * `createPubSub` picks the transport from the configuration (`runtime.pubsub`, or the
 * `AGENT__PUBSUB__*` environment variables): BroadcastChannel for `memory`, node-redis for
 * `redis://`/`rediss://` URLs, the Upstash REST API for `https://` URLs. See docs/pubsub.md.
 */
import type { z } from "zod";
import type { PubSubSchema } from "../config/schema/runtime.ts";
import type { PubSub } from "./types.ts";
import { createMemoryPubSub } from "./memory.ts";
import { HISTORY_DEFAULTS } from "./history.ts";

export type { HistoryPage, PubSub, Retained, Subscription, SubscriptionEnd } from "./types.ts";
export { HISTORY_DEFAULTS, type HistorySettings } from "./history.ts";
export { PubSubError, type PubSubErrorCode, PubSubUnavailable } from "./errors.ts";

/**
 * The `runtime.pubsub` block: kind, per-subscriber capacity, URL, token, channel prefix, and the
 * retention of run events for replay (defaults of `HISTORY_DEFAULTS` when omitted).
 */
export type PubSubConfig =
  & Omit<z.infer<typeof PubSubSchema>, "retention" | "retention_max_events" | "retention_max_bytes">
  & Partial<
    Pick<
      z.infer<typeof PubSubSchema>,
      "retention" | "retention_max_events" | "retention_max_bytes"
    >
  >;

/** What the caller hands a transport besides its configuration. */
export interface PubSubOptions {
  /**
   * Receives every failure the transport absorbs instead of throwing into a run: each dropped
   * publish, each lost connection or stream (a `PubSubError`). Log or count them here.
   */
  onError?: (err: unknown) => void;
  /** Milliseconds a publish may wait for Redis/Upstash before it is dropped; default 2000. */
  publishTimeoutMs?: number;
  /** Milliseconds between liveness pings of the Redis subscriber connection; default 10000. */
  heartbeatMs?: number;
  /** `memory`: whether subscribers may be in other isolates (see `MemoryPubSubOptions`). */
  otherIsolates?: boolean;
  /** Milliseconds to connect to Redis or get an Upstash stream confirmed; default 5000. */
  connectTimeoutMs?: number;
}

/**
 * Creates the transport `config` names. `memory` needs nothing else; `redis` needs a URL:
 * `redis://`/`rediss://` for a Redis server, `https://` plus `token` for Upstash REST. The
 * Redis-backed transports connect before resolving, so a wrong URL fails here.
 */
export async function createPubSub(
  config: PubSubConfig,
  options: PubSubOptions = {},
): Promise<PubSub> {
  const history = {
    retention: config.retention ?? HISTORY_DEFAULTS.retention,
    maxEvents: config.retention_max_events ?? HISTORY_DEFAULTS.maxEvents,
    maxBytes: config.retention_max_bytes ?? HISTORY_DEFAULTS.maxBytes,
  };
  const common = { capacity: config.capacity, prefix: config.prefix, history, ...options };
  if (config.kind === "memory") return createMemoryPubSub(common);
  if (!config.url) {
    throw new Error(
      'pubsub: kind "redis" needs a url (runtime.pubsub.url or AGENT__PUBSUB__URL): ' +
        "redis://host:6379, rediss://host:6380, or an Upstash REST https:// URL with a token",
    );
  }
  let scheme: string;
  try {
    scheme = new URL(config.url).protocol;
  } catch {
    throw new Error(`pubsub: the url is not a valid URL`);
  }
  if (scheme === "redis:" || scheme === "rediss:") {
    // node-redis (hundreds of modules) and the Upstash client load only for their transport.
    const { createRedisPubSub } = await import("./redis.ts");
    return await createRedisPubSub({ ...common, url: config.url });
  }
  if (scheme === "https:" || scheme === "http:") {
    if (!config.token) {
      throw new Error(
        "pubsub: an Upstash REST url (https://) needs a token " +
          "(runtime.pubsub.token or AGENT__PUBSUB__TOKEN)",
      );
    }
    const { createUpstashPubSub } = await import("./upstash.ts");
    return await createUpstashPubSub({ ...common, url: config.url, token: config.token });
  }
  throw new Error(
    `pubsub: unsupported url scheme '${scheme}' (use redis://, rediss:// or https://)`,
  );
}
