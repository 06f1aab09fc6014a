/**
 * Test helpers of the AI SDK add-on: the official `ai` package's chat (`AbstractChat` with an
 * in-memory state, as `@ai-sdk/react` builds `useChat` on it) and a `fetch` for its
 * `DefaultChatTransport` that records every request and response stream and can drop a stream
 * mid-way, as a lost connection does.
 */
import assert from "node:assert/strict";
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
  uiMessageChunkSchema,
} from "ai";
import { aiSdkChunkSchema } from "../../../src/protocols/ai_sdk/schemas.ts";
import { parseSse } from "../../_kit/mod.ts";

/** `useChat`'s state without React: the messages and status, replaced as the chat updates. */
class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[];
  constructor(messages: UIMessage[]) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.with(index, message);
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The official chat, as a page holds it. */
export class Chat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new MemoryState(init.messages ?? []) });
  }
}

/** A recorded exchange: the request's body and, for a stream, its whole text. */
export interface Exchange {
  method: string;
  url: string;
  body: Record<string, unknown> | null;
  status: number;
  /** The response's headers. */
  headers: Headers;
  stream: Promise<string> | null;
}

/** A `fetch` for `DefaultChatTransport` that records, and drops a stream on demand. */
export class ChatFetch {
  readonly exchanges: Exchange[] = [];
  /** Drop the next POST's stream after this many `text-delta` chunks (then reset). */
  dropAfterDeltas: number | null = null;

  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : null;
    const res = await fetch(input, init);
    const exchange: Exchange = {
      method: init?.method ?? "GET",
      url: String(input),
      body,
      status: res.status,
      headers: res.headers,
      stream: null,
    };
    this.exchanges.push(exchange);
    if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    assert.equal(res.headers.get("x-vercel-ai-ui-message-stream"), "v1");
    const drop = exchange.method === "POST" ? this.dropAfterDeltas : null;
    this.dropAfterDeltas = null;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const { promise, resolve } = Promise.withResolvers<string>();
    exchange.stream = promise;
    const body2 = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          resolve(text);
          controller.close();
          return;
        }
        text += decoder.decode(value, { stream: true });
        controller.enqueue(value);
        if (drop !== null && (text.match(/"type":"text-delta"/g) ?? []).length >= drop) {
          // The connection is lost: the server sees the client go, the client a network error.
          await reader.cancel();
          resolve(text);
          controller.error(new TypeError("network error"));
        }
      },
      cancel(reason) {
        resolve(text);
        return reader.cancel(reason);
      },
    });
    return new Response(body2, { status: res.status, headers: res.headers });
  };

  /** Every recorded complete stream, each checked with `checkStream`. */
  async checkAll(): Promise<Record<string, unknown>[][]> {
    const out: Record<string, unknown>[][] = [];
    for (const e of this.exchanges) {
      if (!e.stream) continue;
      const text = await e.stream;
      if (text.endsWith("data: [DONE]\n\n")) out.push(await checkStream(text));
    }
    return out;
  }
}

/**
 * Parses a UI message stream and asserts what a conforming producer does: every chunk passes the
 * `ai` package's own chunk schema and the documented one, `start` first, one `finish` last, then
 * `data: [DONE]`; text and tool input only inside an open part.
 */
export async function checkStream(text: string): Promise<Record<string, unknown>[]> {
  assert.ok(text.endsWith("data: [DONE]\n\n"), "the stream ends with [DONE]");
  const chunks: Record<string, unknown>[] = [];
  for (const frame of parseSse(text).events) {
    if (frame.data === "[DONE]") continue;
    assert.equal(frame.event, undefined, "frames have no event: line");
    const chunk = JSON.parse(frame.data);
    const official = await uiMessageChunkSchema().validate!(chunk);
    assert.ok(official.success, `not a UI message chunk: ${frame.data}`);
    const documented = aiSdkChunkSchema().safeParse(chunk);
    assert.ok(documented.success, `not as documented: ${frame.data}`);
    chunks.push(chunk);
  }
  assert.equal(chunks[0]?.type, "start");
  assert.equal(chunks.at(-1)?.type, "finish");
  assert.equal(chunks.filter((c) => c.type === "finish").length, 1);
  for (const kind of ["text", "reasoning"]) {
    const open = new Set<unknown>();
    for (const c of chunks) {
      if (c.type === `${kind}-start`) open.add(c.id);
      if (c.type === `${kind}-delta`) assert.ok(open.has(c.id), `${kind} outside an open part`);
      if (c.type === `${kind}-end`) assert.ok(open.delete(c.id), `end of a ${kind} part not open`);
    }
    assert.equal(open.size, 0, `every ${kind} part is closed`);
  }
  return chunks;
}

/** A transport to the add-on of server `url`, through `recorder`, with extra body fields. */
export function transport(
  url: string,
  recorder: ChatFetch,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({
    api: `${url}/ai-sdk/chat`,
    fetch: recorder.fetch,
    body,
    headers,
  });
}

/** The text of a UI message's text parts. */
export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).flatMap((p) => p.type === "text" ? [p.text] : []).join("");
}
