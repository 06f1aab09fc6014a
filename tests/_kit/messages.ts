/** Pieces of run requests as they are sent: messages, a paced model. */

/** A user message of one text part: `{ role: "user", content: [{ type: "text", value }] }`. */
export function userText(value: string) {
  return { role: "user" as const, content: [{ type: "text" as const, value }] };
}

/** A run's `model` that paces the echo model: `delay_ms` between its tokens. */
export function pacedModel(delay_ms: number) {
  return { override: { inference_params: { provider_params: { delay_ms } } } };
}
