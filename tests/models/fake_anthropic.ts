/**
 * A fake Anthropic Messages server speaking the streaming wire format (message_start,
 * content_block_start/delta/stop for text and tool_use with input_json_delta, message_delta,
 * message_stop, error events), scriptable per test.
 */
import { startFakeServer } from "./fake_server.ts";
import type { Behaviour, FakeServer, Frame } from "./fake_server.ts";

export type { Behaviour, FakeServer, Frame } from "./fake_server.ts";

/** One block of an answer: text in pieces, or a tool use whose JSON input arrives in pieces. */
export type Block =
  | { type: "text"; pieces: string[] }
  | { type: "tool_use"; id: string; name: string; pieces: string[] };

function event(type: string, data: Record<string, unknown>, delay?: number): Frame {
  return { event: type, data: { type, ...data }, delay };
}

/** Frames of a message made of these blocks. */
export function messageFrames(blocks: Block[], options: { delay?: number } = {}): Frame[] {
  const frames: Frame[] = [
    event("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model: "claude-fake",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1 },
      },
    }),
    event("ping", {}),
  ];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      frames.push(
        event("content_block_start", { index, content_block: { type: "text", text: "" } }),
      );
      for (const text of block.pieces) {
        frames.push(
          event(
            "content_block_delta",
            { index, delta: { type: "text_delta", text } },
            options.delay,
          ),
        );
      }
    } else {
      frames.push(event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      }));
      for (const partial_json of block.pieces) {
        frames.push(
          event("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json },
          }, options.delay),
        );
      }
    }
    frames.push(event("content_block_stop", { index }));
  });
  const toolUse = blocks.some((b) => b.type === "tool_use");
  frames.push(
    event("message_delta", {
      delta: { stop_reason: toolUse ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 9 },
    }),
    event("message_stop", {}),
  );
  return frames;
}

/** A streamed message. */
export function message(blocks: Block[], options: { delay?: number } = {}): Behaviour {
  return { kind: "sse", frames: messageFrames(blocks, options) };
}

/** An error event in the stream after `blocks` (none: before any output). */
export function streamError(type: string, text: string, blocks: Block[] = []): Behaviour {
  const frames = messageFrames(blocks).slice(0, blocks.length ? -2 : 2);
  frames.push({ event: "error", data: { type: "error", error: { type, message: text } } });
  return { kind: "sse", frames };
}

/** An HTTP error with Anthropic's error body (529 overloaded, 429 rate limit, ...). */
export function httpError(
  status: number,
  type: string,
  text: string,
  headers?: Record<string, string>,
): Behaviour {
  return {
    kind: "error",
    status,
    body: { type: "error", error: { type, message: text } },
    headers,
  };
}

/** Starts a fake Anthropic server; its `url` is the provider's base URL (ending in `/v1`). */
export function startFakeAnthropic(): FakeServer {
  return startFakeServer("/v1", () => message([{ type: "text", pieces: ["Hi"] }]));
}
