/**
 * How many connections the open-files limit leaves room for. Every connection is a descriptor,
 * and Deno 2.9's `node:http` listener stops accepting for good once an accept fails for want of
 * one (EMFILE: it never polls the listening socket again). So the cap must stay under the limit
 * by what the rest of the process may hold at the same time; `listen` lowers `max_connections`
 * to fit, with a warning, rather than let a flood of connections wedge the listener.
 */

/** The listen queue the listener asks for (Node's default); Deno accepts all of it at once. */
export const ACCEPT_BACKLOG = 511;

/** Connections over the cap being answered 503 at once; more are closed without an answer. */
export const MAX_REFUSING = 64;

/** Descriptors of everything but connections: the store, pub/sub, tool processes, MCP servers. */
const PROCESS_DESCRIPTORS = 256;

/** Descriptors the cap leaves under the open-files limit. */
export const DESCRIPTOR_RESERVE = ACCEPT_BACKLOG + MAX_REFUSING + PROCESS_DESCRIPTORS;

/**
 * The soft open-files limit of this process (`ulimit -n`), or undefined where it cannot be read
 * (not Linux, no read permission on `/proc`) or is unlimited.
 */
export function openFilesLimit(): number | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync("/proc/self/limits");
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/**
 * The connection cap to serve with: `maxConnections`, or what `limit` leaves after
 * `DESCRIPTOR_RESERVE` when that is less (at least one).
 */
export function connectionCap(maxConnections: number, limit: number | undefined): number {
  if (limit === undefined || maxConnections + DESCRIPTOR_RESERVE <= limit) return maxConnections;
  return Math.max(1, limit - DESCRIPTOR_RESERVE);
}
