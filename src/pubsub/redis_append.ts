/**
 * The Redis transport's appends (redis.ts): the script that runs one turn's appends in one command,
 * its SHA, its arguments, and the same appends as separate commands for a Redis that runs no
 * scripts.
 */
import { createHash } from "node:crypto";
import type { Retained } from "./history.ts";
import { messageOf } from "./errors.ts";
import type { Client } from "./redis_connection.ts";
import { entryId, HISTORY_SUFFIX } from "./stream_history.ts";

/**
 * The appends of one turn of the event loop (every run's events of that turn) in one command,
 * instead of an `XADD` per event, a `PEXPIRE` and a `PUBLISH` per run (each a command node-redis
 * encodes, sends and answers, and Redis parses: at 500 paced streams Redis fell behind and the
 * backlog outlived the publish timeout). KEYS: each run's history stream, whose name minus
 * `HISTORY_SUFFIX` is the channel; ARGV[1]: the trim bound; then per key the TTL to set in ms
 * (0: none), the entry count, the live message, and each entry's id and message. A count of -1
 * is one entry whose message is also the live message, which is not sent twice (a paced token:
 * the run's one event of the turn). A failed `XADD` (an id at or below the stream's newest) does
 * not stop the others or the publish, as when they were separate commands; that key's answer is
 * the error instead of `OK`, and its append is reported as dropped.
 */
export const APPEND_SCRIPT = `local at = 2
local out = {}
for k = 1, #KEYS do
  local ttl, count = ARGV[at], tonumber(ARGV[at + 1])
  at = at + 2
  local message
  if count < 0 then
    count = 1
    message = ARGV[at + 1]
  else
    message = ARGV[at]
    at = at + 1
  end
  local failed = nil
  for i = at, at + 2 * count - 1, 2 do
    local added = redis.pcall('XADD', KEYS[k], 'MAXLEN', '~', ARGV[1], ARGV[i], 'm', ARGV[i + 1])
    if type(added) == 'table' and added.err and not failed then failed = added.err end
  end
  at = at + 2 * count
  if ttl ~= '0' then redis.call('PEXPIRE', KEYS[k], ttl) end
  redis.call('PUBLISH', string.sub(KEYS[k], 1, -${HISTORY_SUFFIX.length + 1}), message)
  out[k] = failed and ('XADD failed: ' .. failed) or 'OK'
end
return out`;

/** One append waiting for the end of its turn, to go out with the others of the turn. */
export interface Pending {
  name: string;
  key: string;
  entries: Retained[];
  message: string;
  ttl: number;
  done: () => void;
}

/**
 * The script's SHA1, what `EVALSHA` names it by: loaded (`SCRIPT LOAD`) as the publisher connects,
 * so an append sends ~60 bytes of script reference instead of the script's ~500, which Redis would
 * parse and hash again on every `EVAL`.
 */
export const APPEND_SHA = createHash("sha1").update(APPEND_SCRIPT).digest("hex");

/** The script's arguments for a turn's appends (see `APPEND_SCRIPT`). */
export function scriptArgs(batch: Pending[], maxEvents: number): string[] {
  const args = [String(batch.length), ...batch.map((item) => item.key), String(maxEvents)];
  for (const item of batch) {
    const { entries, message } = item;
    if (entries.length === 1 && entries[0].message === message) {
      args.push(String(item.ttl), "-1", entryId(entries[0].seq), message);
      continue;
    }
    args.push(String(item.ttl), String(entries.length), message);
    for (const entry of entries) args.push(entryId(entry.seq), entry.message);
  }
  return args;
}

/** The commands of one append, one by one. */
function commands(client: Client, item: Pending, threshold: number): Promise<unknown>[] {
  // One connection, so Redis runs them in this order: the entries exist before the publish.
  const sent: Promise<unknown>[] = item.entries.map((entry) =>
    client.xAdd(item.key, entryId(entry.seq), { m: entry.message }, {
      TRIM: { strategy: "MAXLEN", strategyModifier: "~", threshold },
    })
  );
  if (item.ttl > 0) sent.push(client.pExpire(item.key, item.ttl));
  sent.push(client.publish(item.name, item.message));
  return sent;
}

/** A turn's appends as separate commands, in order (no script): each one's answer. */
export function oneByOne(client: Client, batch: Pending[], maxEvents: number): Promise<string[]> {
  return Promise.all(
    batch.map((item) =>
      Promise.all(commands(client, item, maxEvents)).then(() => "OK", (err) => messageOf(err))
    ),
  );
}
