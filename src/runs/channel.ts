/**
 * A run's channel: the pub/sub channel (and history) its events travel on, the name of it, and
 * the decoding of its messages (`decodeRunMessage`), a large retained one decoded once for the
 * streams that replay it at the same time (`decodeRetained`).
 */
import { primeEncoding, type SequencedEvent } from "../api/events.ts";
import type { Retained } from "../pubsub/mod.ts";

/**
 * The pub/sub channel (and history) of a run's events. A message on it is one event with its
 * sequence number (`{seq, event}`), or a JSON array of those one turn of the event loop produced
 * (`decodeRunMessage`); a history entry is always one.
 */
export function runChannel(runId: string): string {
  return `run:${runId}`;
}

/** Messages this long keep their event's JSON for the native stream (`primeEncoding`). */
export const PRIME_CHARS = 64 * 1024;

/** The events of one message on a run channel. */
export function decodeRunMessage(message: string): SequencedEvent[] {
  const parsed = JSON.parse(message) as SequencedEvent | SequencedEvent[];
  if (Array.isArray(parsed)) return parsed;
  // One large event (a snapshot of a long conversation): its JSON is the message's `event`
  // member, so a replay to many streams encodes it no more (Delivery writes `{"seq":N,"event":`).
  if (message.length >= PRIME_CHARS) {
    const head = /^\{"seq":(?:\d+|null),"event":/.exec(message);
    if (head && message.endsWith("}")) {
      primeEncoding(parsed.event, message.slice(head[0].length, -1));
    }
  }
  return [parsed];
}

/**
 * A large retained message decoded, shared by the streams that replay it at the same time (20
 * clients resuming a run whose snapshot is 38 MB parse it once, not 20 times): held by the
 * streams that replay it, and only weakly here, so it goes when the last of them is done.
 */
export interface Decoded {
  message: string;
  events: SequencedEvent[];
}
const decodedMessages = new Map<string, WeakRef<Decoded>>();
const forgetDecoded = new FinalizationRegistry<string>((key) => {
  if (decodedMessages.get(key)?.deref() === undefined) decodedMessages.delete(key);
});

/**
 * The events of a retained message of `channel`, decoded once while any stream holds the result
 * (`keep`, which the stream drops once it has replayed them).
 */
export function decodeRetained(
  channel: string,
  entry: Retained,
  keep: Decoded[],
): SequencedEvent[] {
  if (entry.message.length < PRIME_CHARS) return decodeRunMessage(entry.message);
  const key = `${channel}\n${entry.seq}`;
  let decoded = decodedMessages.get(key)?.deref();
  if (decoded === undefined || decoded.message !== entry.message) {
    decoded = { message: entry.message, events: decodeRunMessage(entry.message) };
    decodedMessages.set(key, new WeakRef(decoded));
    forgetDecoded.register(decoded, key);
  }
  keep.push(decoded);
  return decoded.events;
}
