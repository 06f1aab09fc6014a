/**
 * The scriptable HTTP machinery shared by the fake provider servers: a `Deno.serve` on port 0 that
 * answers each request with the next behaviour of a queue, records every request, and can hang,
 * stream slowly or break a stream midway. Everything it starts stops on `close()`, so Deno's test
 * sanitizers stay quiet.
 */
import { setImmediate } from "node:timers";

/** One server-sent event frame; `delay` waits before sending it. */
export interface Frame {
  event?: string;
  /** A string is sent as is (`[DONE]`), anything else as JSON. */
  data: unknown;
  delay?: number;
}

/** How the server answers one request. */
export type Behaviour =
  /** A 200 event stream of these frames; `breakAfter` kills the connection after that many. */
  | { kind: "sse"; frames: Frame[]; breakAfter?: number; headers?: Record<string, string> }
  /** An HTTP error with a JSON (or text) body. */
  | { kind: "error"; status: number; body: unknown; headers?: Record<string, string> }
  /** Never sends the response headers (until the client gives up or the server closes). */
  | { kind: "hang" }
  /** Sends 200 headers, then no body byte at all. */
  | { kind: "hang_body" }
  /**
   * A body sent as it is (a recorded response), in pieces of `piece` bytes when given: each piece
   * is its own write, a macrotask after the previous one, so cuts land inside events and inside
   * UTF-8 characters.
   */
  | {
    kind: "bytes";
    body: Uint8Array;
    status?: number;
    contentType?: string;
    piece?: number;
  }
  /** Decides the answer from the request (a provider that validates what it is sent). */
  | { kind: "respond"; to: (request: RecordedRequest) => Behaviour };

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A running fake server. */
export interface FakeServer {
  /** Base URL including the API prefix the provider expects (e.g. `/v1`). */
  url: string;
  requests: RecordedRequest[];
  /** Appends behaviours; each request takes the next one, the fallback when none is left. */
  enqueue(...behaviours: Behaviour[]): void;
  /** Stops the server and everything it still streams. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Waits `ms` unless `signal` aborts first (then resolves early, without leaving a timer). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

const encoder = new TextEncoder();

function encodeFrame(frame: Frame): Uint8Array {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return encoder.encode(`${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`);
}

/** Starts a fake server; `prefix` is the API path prefix, `fallback` answers an empty queue. */
export function startFakeServer(prefix: string, fallback: () => Behaviour): FakeServer {
  const queue: Behaviour[] = [];
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();

  const respond = async (req: Request): Promise<Response> => {
    const text = await req.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text);
    } catch {
      // Recorded as empty: the tests only send JSON.
    }
    requests.push({
      method: req.method,
      path: new URL(req.url).pathname,
      headers: req.headers,
      body,
    });
    let behaviour = queue.shift() ?? fallback();
    while (behaviour.kind === "respond") behaviour = behaviour.to(requests[requests.length - 1]);
    // Either the client going away (the body is cancelled) or the server closing ends whatever
    // this request waits for. A hung request before headers ends with the server.
    const gone = new AbortController();
    const stop = AbortSignal.any([gone.signal, closing.signal]);
    switch (behaviour.kind) {
      case "error":
        return new Response(
          typeof behaviour.body === "string" ? behaviour.body : JSON.stringify(behaviour.body),
          {
            status: behaviour.status,
            headers: { "content-type": "application/json", ...behaviour.headers },
          },
        );
      case "hang":
        await pause(3_600_000, closing.signal);
        return new Response(null, { status: 499 });
      case "hang_body":
        return new Response(
          new ReadableStream({
            async start(controller) {
              await pause(3_600_000, stop);
              if (!gone.signal.aborted) controller.close();
            },
            cancel: () => gone.abort(),
          }),
          { headers: { "content-type": "text/event-stream" } },
        );
      case "bytes": {
        const { body, piece } = behaviour;
        let offset = 0;
        const stream = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (offset >= body.length || stop.aborted) return controller.close();
            // A macrotask between pieces lets each one leave as its own write.
            if (offset > 0) await new Promise((resolve) => setImmediate(resolve));
            const end = piece ? Math.min(offset + piece, body.length) : body.length;
            controller.enqueue(body.slice(offset, end));
            offset = end;
          },
          cancel: () => gone.abort(),
        }, { highWaterMark: 0 });
        return new Response(stream, {
          status: behaviour.status ?? 200,
          headers: { "content-type": behaviour.contentType ?? "text/event-stream" },
        });
      }
      case "sse": {
        let sent = 0;
        const { frames, breakAfter } = behaviour;
        const stream = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (breakAfter !== undefined && sent >= breakAfter) {
              // An error in the body makes Deno drop the connection mid-stream. Deno prints the
              // reason, so it says that this is on purpose.
              controller.error("fake server: stream broken on purpose (expected in tests)");
              return;
            }
            const frame = frames[sent++];
            if (frame === undefined || stop.aborted) return controller.close();
            if (frame.delay) await pause(frame.delay, stop);
            if (stop.aborted) return controller.close();
            controller.enqueue(encodeFrame(frame));
          },
          cancel: () => gone.abort(),
        }, { highWaterMark: 0 });
        return new Response(stream, {
          headers: {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            ...behaviour.headers,
          },
        });
      }
    }
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {}, signal: closing.signal },
    respond,
  );
  const url = `http://127.0.0.1:${server.addr.port}${prefix}`;
  const close = async () => {
    closing.abort();
    await server.finished;
  };
  return {
    url,
    requests,
    enqueue: (...b) => queue.push(...b),
    close,
    [Symbol.asyncDispose]: close,
  };
}
