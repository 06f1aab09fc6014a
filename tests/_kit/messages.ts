/** Message bodies as requests carry them. */

/** A user message of one text part: `{ role: "user", content: [{ type: "text", value }] }`. */
export function userText(value: string) {
  return { role: "user" as const, content: [{ type: "text" as const, value }] };
}
