/**
 * A fake OpenAI Chat Completions server speaking the streaming wire format
 * (`data: {chat.completion.chunk}` frames, a usage chunk, `data: [DONE]`), scriptable per test.
 */
import { startFakeServer } from "./fake_server.ts";
import type { Behaviour, FakeServer, Frame } from "./fake_server.ts";

export type { Behaviour, FakeServer, Frame } from "./fake_server.ts";

const MODEL = "gpt-fake";

/** One chat.completion.chunk. */
export function chunk(delta: Record<string, unknown>, finish: string | null = null): Frame {
  return {
    data: {
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: MODEL,
      choices: [{ index: 0, delta, finish_reason: finish }],
    },
  };
}

/** The trailing frames: finish reason, usage chunk, `[DONE]`. */
export function tail(finish: string, usage = { prompt_tokens: 11, completion_tokens: 7 }): Frame[] {
  return [
    chunk({}, finish),
    {
      data: {
        id: "chatcmpl-fake",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: MODEL,
        choices: [],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      },
    },
    { data: "[DONE]" },
  ];
}

/** Frames of a text answer; the role chunk comes at once, each token after `delay` ms. */
export function textFrames(tokens: string[], delay = 0): Frame[] {
  return [
    chunk({ role: "assistant", content: "" }),
    ...tokens.map((content) => ({ ...chunk({ content }), delay })),
    ...tail("stop"),
  ];
}

/** A streamed text answer. */
export function text(tokens: string[], options: { delay?: number } = {}): Behaviour {
  return { kind: "sse", frames: textFrames(tokens, options.delay) };
}

/** Tool calls whose arguments arrive in the given pieces, one chunk each. */
export function toolCalls(calls: { id: string; name: string; pieces: string[] }[]): Behaviour {
  const frames: Frame[] = [chunk({ role: "assistant", content: null })];
  calls.forEach((call, index) => {
    frames.push(chunk({
      tool_calls: [{
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: "" },
      }],
    }));
    for (const piece of call.pieces) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  return { kind: "sse", frames: [...frames, ...tail("tool_calls")] };
}

/** An HTTP error with OpenAI's error body. */
export function httpError(
  status: number,
  message: string,
  headers?: Record<string, string>,
): Behaviour {
  return {
    kind: "error",
    status,
    body: { error: { message, type: "fake_error", param: null, code: null } },
    headers,
  };
}

/** A stream that sends the first `after` token chunks (of `tokens`) and then drops the connection. */
export function broken(tokens: string[], after: number): Behaviour {
  return { kind: "sse", frames: textFrames(tokens), breakAfter: 1 + after };
}

/** Starts a fake OpenAI server; its `url` is the provider's base URL (ending in `/v1`). */
export function startFakeOpenAI(): FakeServer {
  return startFakeServer("/v1", () => text(["Hello", " world"]));
}
