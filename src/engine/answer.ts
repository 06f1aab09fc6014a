/**
 * The content of the assistant message a model step is writing, in the order the model gave it:
 * reasoning blocks (with the provider metadata the next request sends back) and text; then the
 * sources it used and cited, in the order they came.
 */
import type { Part } from "../api/schemas.ts";
import type { ModelSource, ProviderMetadata } from "../models/mod.ts";

type Reasoning = Extract<Part, { type: "reasoning" }>;

/** An assistant answer being streamed. */
export class Answer {
  readonly #parts: Part[] = [];
  /** Sources go after the content, so they never split its text. */
  readonly #sources: Part[] = [];
  /** Reasoning blocks by the stream's block id. */
  readonly #reasoning = new Map<string, Reasoning>();
  #text = "";

  /** The answer's text so far (reasoning left out). */
  get text(): string {
    return this.#text;
  }

  /** Appends text (to the last part when it is text, else as a new part). */
  addText(delta: string): void {
    this.#text += delta;
    const last = this.#parts.at(-1);
    if (last?.type === "text") last.value += delta;
    else this.#parts.push({ type: "text", value: delta });
  }

  /** Adds a source the answer used or cites. */
  addSource(source: ModelSource): void {
    this.#sources.push({ type: "source", ...source });
  }

  /** Opens a reasoning block. */
  startReasoning(id: string): void {
    const part: Reasoning = { type: "reasoning", value: "" };
    this.#reasoning.set(id, part);
    this.#parts.push(part);
  }

  /** Appends reasoning text to block `id` (opening it when the stream did not). */
  addReasoning(id: string, delta: string): void {
    if (!this.#reasoning.has(id)) this.startReasoning(id);
    this.#reasoning.get(id)!.value += delta;
  }

  /** Closes block `id` with what the provider attached to it. */
  endReasoning(id: string, meta: ProviderMetadata | undefined): void {
    const part = this.#reasoning.get(id);
    if (part && meta) part.provider_metadata = meta;
  }

  /** The text of reasoning block `id` so far ("" when there is none). */
  reasoningText(id: string): string {
    return this.#reasoning.get(id)?.value ?? "";
  }

  /** Whether anything worth storing was said. */
  get empty(): boolean {
    return this.parts().length === 0;
  }

  /** The content to store: empty text and empty unsigned reasoning left out; then the sources. */
  parts(): Part[] {
    return [
      ...this.#parts.filter((p) =>
        p.type === "text" ? p.value !== "" : p.type !== "reasoning" || p.value !== "" ||
          p.provider_metadata !== undefined
      ),
      ...this.#sources,
    ].map((p) => ({ ...p }));
  }
}
