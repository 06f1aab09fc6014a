/**
 * The byte and text buffers of a tool process's output: stdout split into lines for the protocol,
 * and the end of what the tool wrote kept for error messages. Both bounded in what they copy.
 */

/** Keeps the last `limit` characters of a text stream. */
export class Tail {
  #text = "";
  #cut = false;
  /** A tail of at most `limit` characters (it holds up to twice that between trims). */
  constructor(readonly limit: number) {}
  /** Appends a chunk of the stream. */
  push(chunk: string): void {
    this.#text += chunk;
    // Trim lazily so a chatty tool costs amortized O(1) per chunk.
    if (this.#text.length > this.limit * 2) {
      this.#text = this.#text.slice(-this.limit);
      this.#cut = true;
    }
  }
  /** The last `limit` characters, after `…` when earlier ones were dropped. */
  toString(): string {
    const cut = this.#cut || this.#text.length > this.limit;
    return (cut ? "…" : "") + this.#text.slice(-this.limit);
  }
}

/** Splits a byte stream into lines without copying a long line more than once. */
export class LineBuffer {
  #chunks: Uint8Array[] = [];
  #length = 0;
  /** Bytes of the pending line. */
  get length(): number {
    return this.#length;
  }
  /** The first byte of the pending line, or undefined. */
  get first(): number | undefined {
    return this.#chunks[0]?.[0];
  }
  /** Appends a piece of the pending line (the caller finds the newlines). */
  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }
  /** The pending line as one array (not copied when it came in one piece); empties the buffer. */
  take(): Uint8Array {
    const out = this.#chunks.length === 1 ? this.#chunks[0] : new Uint8Array(this.#length);
    if (this.#chunks.length > 1) {
      let at = 0;
      for (const c of this.#chunks) {
        out.set(c, at);
        at += c.length;
      }
    }
    this.#chunks = [];
    this.#length = 0;
    return out;
  }
}
