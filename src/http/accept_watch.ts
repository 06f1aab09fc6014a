/**
 * Listens again when the listener has stopped accepting. Deno 2.9's `node:http` listener never
 * polls its socket again after an accept failed for want of a descriptor (EMFILE): connections
 * then wait in the kernel's queue, unanswered, long after descriptors are free again, while the
 * connections already open (a kept-alive health check) are served as usual. The connection cap
 * keeps connections from using every descriptor (open_files.ts), but the rest of the process can
 * still run out (tool processes, a store pool). So every few seconds this connects to the
 * listener from a port it picked; when neither that connection nor any other was accepted within
 * a second, while the event loop ran on time, the accept loop is gone: the listening socket is
 * closed and opened again on the same address, open connections untouched.
 */
import type { Server } from "node:http";
import { connect, Server as NetServer, type Socket } from "node:net";
import type { Logger } from "../log.ts";
import { ACCEPT_BACKLOG } from "./open_files.ts";

/** How often the listener is checked, and how long a check connection may wait to be accepted. */
export interface AcceptWatchTiming {
  intervalMs: number;
  timeoutMs: number;
}

/** A running watch of a listener's accept loop. */
export interface AcceptWatch {
  /**
   * Called for every connection accepted: whether `socket` is the watch's own (not a client:
   * close it, count nothing).
   */
  isCheck(socket: Socket): boolean;
  /** Stops watching. */
  stop(): void;
}

const DEFAULT_TIMING: AcceptWatchTiming = { intervalMs: 2_000, timeoutMs: 1_000 };

/** How many past checks' connections are still recognised as the watch's own. */
const RECENT_CHECKS = 4;

/**
 * Watches `server`, listening on `host:port` (`host` an address, as `server.address()` gives it),
 * and listens again if it stops accepting.
 */
export function watchAccept(
  server: Server,
  host: string,
  port: number,
  log: Logger,
  timing: AcceptWatchTiming = DEFAULT_TIMING,
): AcceptWatch {
  const target = checkHost(host);
  let check: { socket: Socket; failed: boolean } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Connections accepted so far, the check's or any other: under a flood the check connection
  // may find the queue full, but a listener that accepts anything is alive.
  let accepted = 0;
  // The ports of the last few checks: a check connection the listener accepts only after its
  // check ended (a busy event loop) is still the watch's own, not a client that timed out.
  const checkPorts: number[] = [];

  const start = () => {
    // A port out of Linux's ephemeral range (32768-60999), so it rarely collides with one the
    // kernel handed out; a collision only skips this check.
    const localPort = 20_000 + Math.floor(Math.random() * 12_000);
    const socket = connect({ host: target, port, localAddress: target, localPort });
    const current = { socket, failed: false };
    checkPorts.push(localPort);
    if (checkPorts.length > RECENT_CHECKS) checkPorts.shift();
    const acceptedBefore = accepted;
    // Refused means nothing listens any more; anything else (the port taken, no descriptor left)
    // says nothing about the accept loop.
    socket.on("error", (err: Error & { code?: string }) => {
      if (err.code !== "ECONNREFUSED") current.failed = true;
    });
    check = current;
    const started = performance.now();
    timer = setTimeout(() => {
      socket.destroy();
      // A stalled event loop delays the accept and this timer alike: no verdict then.
      const late = performance.now() - started - timing.timeoutMs > timing.timeoutMs / 2;
      if (accepted === acceptedBefore && !current.failed && !late) relisten();
      check = undefined;
      timer = setTimeout(start, timing.intervalMs);
    }, timing.timeoutMs);
  };

  const relisten = () => {
    log.warn("the listener stopped accepting connections: listening again", { host, port });
    // net.Server's close, not http.Server's: that one would also close idle connections and stop
    // the header and request timeouts. Open connections stay as they are.
    NetServer.prototype.close.call(server);
    server.once("error", (err) => log.error("could not listen again", { error: String(err) }));
    server.listen({ host, port, backlog: ACCEPT_BACKLOG });
  };

  timer = setTimeout(start, timing.intervalMs);
  return {
    isCheck(socket) {
      accepted++;
      if (socket.remotePort === undefined || !checkPorts.includes(socket.remotePort)) return false;
      return socket.remoteAddress?.replace(/^::ffff:/, "") === target;
    },
    stop() {
      clearTimeout(timer);
      check?.socket.destroy();
      check = undefined;
    },
  };
}

/** The address to reach a listener on `host` at: loopback for the wildcard addresses. */
function checkHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "::1";
  return host;
}
