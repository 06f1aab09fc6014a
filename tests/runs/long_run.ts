/**
 * A long run for the resume tests (every protocol): the echo model streams its 240 words back one
 * word (a token) at a time, paced so that a client can drop the stream mid-way.
 */
import { pacedModel } from "../_kit/mod.ts";

/** The long answer. */
export const WORDS = Array.from({ length: 240 }, (_, i) => `w${i + 1}`).join(" ");

/** A native run request of the long answer, with `extra` fields. */
export function longRun(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messages: [{ role: "user", content: [{ type: "text", value: WORDS }] }],
    model: PACED,
    ...extra,
  };
}

/** The model override that paces the echo model (4 ms between tokens). */
export const PACED = pacedModel(4);

/** A random integer from `min` to `max`: where a test drops a stream (said in its messages). */
export function randomCut(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}
