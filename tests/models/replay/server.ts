/**
 * The replay server: answers a provider's HTTP API with recorded real responses (`fixtures/`, see
 * `fixtures/SOURCES.md`) in that provider's wire format (OpenAI Chat Completions SSE, Anthropic
 * Messages SSE, Gemini `streamGenerateContent?alt=sse`), records every request body it receives,
 * and can cut a body into pieces of a few bytes that split events and UTF-8 characters.
 *
 * Built on the fake server's machinery (`../fake_server.ts`): a queue of answers, one per request.
 */
import { type Behaviour, type FakeServer, startFakeServer } from "../fake_server.ts";

export type { Behaviour, FakeServer, RecordedRequest } from "../fake_server.ts";

/** A provider wire protocol, named after the fixture folder that holds its recordings. */
export type Wire = "openai" | "anthropic" | "google";

/** A recorded response, ready to be served. */
export interface Recording {
  /** The fixture's path under `fixtures/` (`anthropic/anthropic-text.chunks.txt`). */
  name: string;
  wire: Wire;
  status: number;
  contentType: string;
  /** The exact bytes of the response body. */
  body: Uint8Array;
}

const FIXTURES = new URL("./fixtures/", import.meta.url);
const encoder = new TextEncoder();

/** The API path prefix each wire's provider puts after the host in its base URL. */
const PREFIX: Record<Wire, string> = { openai: "/v1", anthropic: "/v1", google: "/v1beta" };

/** Reads a fixture as text. */
export function fixtureText(name: string): string {
  return Deno.readTextFileSync(new URL(name, FIXTURES));
}

/** A fixture that is a JSON document (a recorded request or a non-streamed response). */
export function fixtureJson<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(fixtureText(name)) as T;
}

/** The data payloads of a `.chunks.txt` fixture, one per non-empty line. */
function chunkLines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}

/** Chunk payloads framed as the wire sends them (see SOURCES.md). */
function frameChunks(wire: Wire, lines: string[]): string {
  switch (wire) {
    case "openai":
      return lines.map((l) => `data: ${l}\n\n`).join("") + "data: [DONE]\n\n";
    case "anthropic":
      return lines.map((l) => `event: ${JSON.parse(l).type}\ndata: ${l}\n\n`).join("");
    case "google":
      return lines.map((l) => `data: ${l}\r\n\r\n`).join("");
  }
}

/** A recorded non-streamed Anthropic message, re-encoded as the Messages stream (SOURCES.md). */
function anthropicMessageStream(message: Record<string, unknown>): string[] {
  const { content, stop_reason, stop_sequence, usage, ...rest } = message as {
    content: Record<string, unknown>[];
    stop_reason: string;
    stop_sequence: string | null;
    usage: Record<string, unknown>;
  };
  const events: Record<string, unknown>[] = [{
    type: "message_start",
    message: {
      ...rest,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  }];
  content.forEach((block, index) => {
    const delta = (d: Record<string, unknown>) =>
      events.push({ type: "content_block_delta", index, delta: d });
    switch (block.type) {
      case "thinking":
        events.push({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        });
        delta({ type: "thinking_delta", thinking: block.thinking });
        delta({ type: "signature_delta", signature: block.signature });
        break;
      case "text":
        events.push({
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        });
        delta({ type: "text_delta", text: block.text });
        break;
      case "tool_use":
        events.push({
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        });
        delta({ type: "input_json_delta", partial_json: JSON.stringify(block.input) });
        break;
      default:
        throw new Error(`no stream encoding for a recorded ${block.type} block`);
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason, stop_sequence },
      usage: { output_tokens: usage.output_tokens },
    },
    { type: "message_stop" },
  );
  return events.map((e) => JSON.stringify(e));
}

/** Loads a fixture as the response it records (see SOURCES.md for each format). */
export function recording(name: string): Recording {
  const wire = name.split("/")[0] as Wire;
  if (!(wire in PREFIX)) throw new Error(`fixture ${name} is not under a wire folder`);
  const text = fixtureText(name);
  const sse = (body: string): Recording => ({
    name,
    wire,
    status: 200,
    contentType: "text/event-stream",
    body: encoder.encode(body),
  });
  // Two recordings were stored without the blank line that ends the wire's last event; without it
  // an SSE parser never dispatches that event (SOURCES.md).
  if (name.endsWith(".sse")) {
    return sse(/\n\r?\n$/.test(text) ? text : text.replace(/\n?$/, "\n\n"));
  }
  if (name.endsWith(".chunks.txt")) return sse(frameChunks(wire, chunkLines(text)));
  // An error body: its status is in its name (`google-429-retry-info.json`).
  const status = name.match(/-(\d{3})(-[a-z-]+)?\.json$/);
  if (status) {
    const code = Number(status[1]);
    return {
      name,
      wire,
      status: code,
      contentType: "application/json",
      body: encoder.encode(text),
    };
  }
  if (wire === "google") return sse(frameChunks(wire, [JSON.stringify(JSON.parse(text))]));
  if (wire === "anthropic") return sse(frameChunks(wire, anthropicMessageStream(JSON.parse(text))));
  throw new Error(`no replay format for ${name}`);
}

/** How a recording is answered: whole, or cut into pieces of `piece` bytes. */
export function replay(rec: Recording, options: { piece?: number } = {}): Behaviour {
  return {
    kind: "bytes",
    body: rec.body,
    status: rec.status,
    contentType: rec.contentType,
    piece: options.piece,
  };
}

/**
 * Where cuts into `piece`-byte pieces fall: inside a UTF-8 character (a continuation byte starts
 * the next piece) and inside an event (not right after its blank line). A test that replays in
 * pieces asserts both are non-zero, so it cannot pass without exercising them.
 */
export function cuts(rec: Recording, piece: number): { utf8: number; events: number } {
  const b = rec.body;
  const endsEvent = (at: number) =>
    b[at - 1] === 0x0a && (b[at - 2] === 0x0a || (b[at - 2] === 0x0d && b[at - 3] === 0x0a));
  let utf8 = 0;
  let events = 0;
  for (let at = piece; at < b.length; at += piece) {
    if ((b[at] & 0xc0) === 0x80) utf8++;
    if (!endsEvent(at)) events++;
  }
  return { utf8, events };
}

/** A replay server for one wire: `url` is the provider's base URL (prefix included). */
export function startReplayServer(wire: Wire): FakeServer {
  // A request the test did not plan for fails visibly (418 is never retried).
  return startFakeServer(PREFIX[wire], () => ({
    kind: "error",
    status: 418,
    body: { error: { message: "replay server: no answer was enqueued for this request" } },
  }));
}

/** The manifest `model` block of a provider pointed at a replay server. */
export function modelBlock(
  provider: string,
  server: FakeServer,
  more: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    provider,
    model: `${provider}-replayed`,
    base_url: server.url,
    api_key: "replay-key",
    retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 20 },
    ...more,
  };
}

/** The data payloads of a recording's SSE body, parsed (`[DONE]` left out). */
export function payloads(rec: Recording): Record<string, unknown>[] {
  const text = new TextDecoder().decode(rec.body);
  return text.split(/\r?\n/).filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim()).filter((d) => d !== "[DONE]").map((d) => JSON.parse(d));
}

/** A JSON value read loosely: any property, array item or primitive of a recorded payload. */
// deno-lint-ignore no-explicit-any
type Loose = any;

/** The text pieces a recording carries: answer text, or reasoning when `reasoning` is true. */
function recordedPieces(rec: Recording, reasoning: boolean): string {
  const out: string[] = [];
  for (const p of payloads(rec) as Loose[]) {
    switch (rec.wire) {
      case "openai":
        for (const c of p.choices ?? []) {
          const piece = reasoning
            ? c.delta?.reasoning_content ?? c.delta?.reasoning
            : c.delta?.content;
          if (typeof piece === "string") out.push(piece);
        }
        break;
      case "anthropic":
        if (!reasoning && p.delta?.type === "text_delta") out.push(p.delta.text);
        if (reasoning && p.delta?.type === "thinking_delta") out.push(p.delta.thinking);
        break;
      case "google":
        for (const c of p.candidates ?? []) {
          for (const part of c.content?.parts ?? []) {
            if (typeof part.text === "string" && Boolean(part.thought) === reasoning) {
              out.push(part.text);
            }
          }
        }
        break;
    }
  }
  return out.join("");
}

/**
 * The answer text a recording carries (reasoning and thoughts left out), read straight from its
 * payloads: what a client must receive byte for byte.
 */
export function recordedText(rec: Recording): string {
  return recordedPieces(rec, false);
}

/** The reasoning text a recording carries (thinking, `reasoning_content`, thought summaries). */
export function recordedReasoning(rec: Recording): string {
  return recordedPieces(rec, true);
}
