/**
 * Newline-delimited framing of what a stdio MCP server writes, bounded before anything is
 * buffered: each chunk is searched for newlines once (never the whole buffer again), a line's
 * pieces are joined once when it ends, and a line past `maxBytes` is not kept at all — only its
 * first and last bytes, enough to name the request it answers (docs/tools.md#mcp-limits).
 *
 * Not the SDK's `ReadBuffer`: it concatenates the whole buffer per chunk and scans it from the
 * start for a newline, quadratic in a line's length (a 9 MB line froze the event loop 3.9 s).
 */

/** Bytes of a line kept at its start and its end once it is too long (to find its `id`). */
const EDGE_BYTES = 256;

/** One framed line: its text, or that it was too long (its size and the id it answers, if any). */
export type FramedLine =
  | { kind: "line"; text: string }
  | { kind: "too_large"; bytes: number; id: string | number | null };

/** Splits chunks into lines, each at most `maxBytes` long (without its newline). */
export class LineReader {
  #parts: Uint8Array[] = [];
  #size = 0;
  #over = false;
  #head: Uint8Array = new Uint8Array(0);
  #tail: Uint8Array = new Uint8Array(0);
  readonly #decoder = new TextDecoder();

  /** A reader of lines of at most `maxBytes`. */
  constructor(readonly maxBytes: number) {}

  /** The lines `chunk` completes, in order; what follows its last newline waits for more. */
  push(chunk: Uint8Array): FramedLine[] {
    const lines: FramedLine[] = [];
    let start = 0;
    while (true) {
      const nl = chunk.indexOf(10, start);
      this.#take(chunk.subarray(start, nl === -1 ? chunk.length : nl));
      if (nl === -1) break;
      lines.push(this.#finish());
      start = nl + 1;
    }
    return lines;
  }

  #take(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.#size += piece.length;
    if (!this.#over && this.#size > this.maxBytes) {
      // From here on only the edges are kept: the start now, the end as it comes.
      this.#over = true;
      this.#head = join(this.#parts, EDGE_BYTES);
      this.#parts = [];
    }
    if (this.#over) this.#tail = lastBytes(this.#tail, piece);
    else this.#parts.push(piece);
  }

  #finish(): FramedLine {
    const line: FramedLine = this.#over
      ? { kind: "too_large", bytes: this.#size, id: this.#idOf() }
      : { kind: "line", text: this.#decoder.decode(join(this.#parts)).replace(/\r$/, "") };
    this.#parts = [];
    this.#size = 0;
    this.#over = false;
    this.#head = new Uint8Array(0);
    this.#tail = new Uint8Array(0);
    return line;
  }

  /** The JSON-RPC id of a too long line, from its last or first bytes (SDKs put it at either). */
  #idOf(): string | number | null {
    const value = `(-?\\d+|"(?:[^"\\\\]|\\\\.)*")`;
    const tail = this.#decoder.decode(this.#tail).replace(/\r$/, "");
    const head = this.#decoder.decode(this.#head);
    const found = new RegExp(`"id"\\s*:\\s*${value}\\s*}\\s*$`).exec(tail) ??
      new RegExp(`^\\s*{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?"id"\\s*:\\s*${value}`)
        .exec(head);
    if (!found) return null;
    try {
      return JSON.parse(found[1]) as string | number;
    } catch {
      return null;
    }
  }
}

/** The parts as one array, cut to `limit` bytes. */
function join(parts: Uint8Array[], limit = Infinity): Uint8Array {
  const size = Math.min(limit, parts.reduce((n, p) => n + p.length, 0));
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    if (at >= size) break;
    const piece = part.subarray(0, size - at);
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/** The last `EDGE_BYTES` of `kept` followed by `piece`. */
function lastBytes(kept: Uint8Array, piece: Uint8Array): Uint8Array {
  if (piece.length >= EDGE_BYTES) return piece.slice(piece.length - EDGE_BYTES);
  const out = new Uint8Array(Math.min(EDGE_BYTES, kept.length + piece.length));
  const fromKept = out.length - piece.length;
  out.set(kept.subarray(kept.length - fromKept), 0);
  out.set(piece, fromKept);
  return out;
}
