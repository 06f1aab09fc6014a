/**
 * What the listener tells the routes about a connection: whether its timeout ended the request
 * (the 408 is sent), so a body read that fails then is not reported as the client hanging up.
 */
import type { Context } from "hono";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

// Set on a socket whose request the header or request timeout ended.
const TIMED_OUT = Symbol("agentd.timedOut");
type TimedSocket = Socket & { [TIMED_OUT]?: boolean };

/** Marks `socket`: the listener's timeout ended its request and answered 408. */
export function markTimedOut(socket: Socket): void {
  (socket as TimedSocket)[TIMED_OUT] = true;
}

/** Whether the request of `c` was ended by the listener's header or request timeout. */
export function requestTimedOut(c: Context): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return (incoming?.socket as TimedSocket | undefined)?.[TIMED_OUT] === true;
}
