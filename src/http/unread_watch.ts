/**
 * The byte bound of every SSE stream: what a stream wrote that its client has not read waits in
 * this process (the body's queue and the rest of a long frame, then the listener's and the
 * socket's write buffers), so a client that stops reading would hold it for as long as its
 * connection stays open. A stream whose unread bytes stay above
 * `runtime.attached.max_unread_bytes` for `drain_timeout` ends with `: stream ended:
 * slow_consumer` and its connection is closed; the run goes on (docs/api.md, docs/deploy.md).
 * Under `deno serve` (serverless.ts) only the body's own bytes are seen: Deno pulls a body only as
 * fast as its socket drains, so those are what a silent client holds.
 */
import type { MiddlewareHandler } from "hono";
import type { ServerResponse } from "node:http";
import type { Logger } from "../log.ts";
import { dropSse, sseHeldBytes } from "./kit/mod.ts";

/** How often a stream's unread bytes are looked at. */
const CHECK_MS = 250;

/** What the watch needs of `runtime.attached`. */
export interface UnreadLimits {
  max_unread_bytes: number;
  drain_timeout: number;
}

/** Bytes written to `res` that its client has not read yet (response and socket buffers). */
export function unreadBytes(res: ServerResponse): number {
  return res.writableLength + (res.socket?.writableLength ?? 0);
}

/** A middleware that watches the unread bytes of every SSE response (see the module doc). */
export function watchUnread(limits: UnreadLimits, log: Logger): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (sseHeldBytes(res) === null) return;
    // The node:http listener's response (`serve`); none under `deno serve`.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    let over: number | undefined;
    const timer = setInterval(() => {
      const held = sseHeldBytes(res);
      // Under `deno serve` the stream's end is the watch's end (node:http: the socket's close).
      if (held === null && !outgoing) return clearInterval(timer);
      const unread = (held ?? 0) + (outgoing ? unreadBytes(outgoing) : 0);
      if (unread <= limits.max_unread_bytes) {
        over = undefined;
        return;
      }
      over ??= performance.now();
      if (performance.now() - over < limits.drain_timeout) return;
      clearInterval(timer);
      log.warn("stream dropped: its client read too slowly", {
        path: c.req.path,
        unread_bytes: unread,
        max_unread_bytes: limits.max_unread_bytes,
      });
      if (outgoing) {
        dropSse(res, "slow_consumer");
        // What waits unread is freed only with the connection: a client that does not read
        // would never take the notice either.
        outgoing.destroy();
      } else {
        // Failing the body is how a `Response` closes its connection under `deno serve`.
        dropSse(res, "slow_consumer", true);
      }
    }, CHECK_MS);
    outgoing?.once("close", () => clearInterval(timer));
  };
}
