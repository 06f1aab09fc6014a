/**
 * The identifiers agentd generates for what it keeps (sessions, runs, messages, checkpoints):
 * UUIDs of version 7 (RFC 9562), whose first 48 bits are the time in milliseconds and the other 74
 * random. They are as unique and as unguessable as version 4's random 122 bits would be for what
 * they name, and they sort by the time they were made, so that the store's indexes on them grow at
 * one end: one page written a commit for a burst of new runs, where random keys would each touch a
 * page of their own, read back from disk once the index outgrows the cache.
 */

/** A new UUID of version 7: `xxxxxxxx-xxxx-7xxx-Nxxx-xxxxxxxxxxxx`, N one of 8, 9, a, b. */
export function newId(now: number = Date.now()): string {
  // A random UUID (version 4, variant 10) with its first 48 bits replaced by the milliseconds
  // (big-endian hex; 2^48 ms last until the year 10889) and its version digit by 7.
  const random = crypto.randomUUID();
  const ms = now.toString(16).padStart(12, "0");
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${random.slice(15)}`;
}
