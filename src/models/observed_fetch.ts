/**
 * The fetch a provider's AI SDK model uses for one attempt: it pins the attempt's signal, keeps
 * the request it sends (for the run's step record) and records what the provider answered (status, headers, a connection or body error, the first body
 * byte), so the client classifies failures itself and stops the establishment timeout at the
 * first byte.
 */

/** What the fetch wrapper saw during one attempt. */
export interface Observed {
  /** The HTTP status of the last response. */
  status?: number;
  /** The headers of the last response (`Retry-After`). */
  headers?: Headers;
  /** The request failed before any response (refused, reset, DNS). */
  connectionError?: unknown;
  /** The response body failed while being read. */
  bodyError?: unknown;
  /** Whether a body byte arrived. */
  firstByte: boolean;
  /** Called once, at the first body byte. */
  onFirstByte: () => void;
  /** The last request sent, as the provider received it (kept, never copied or masked here). */
  request?: { url: string; method: string; headers: Headers; body: unknown };
}

/**
 * Bytes a body read asks for. Deno's fetch body, read without a buffer of ours, allocates 64 KiB for
 * every read and hands the chunk on as a view of it: a paced stream, whose chunks are a token's few
 * hundred bytes, then held ~120 KiB of buffers per open stream and allocated 64 KiB per token. The
 * buffer is held by every open stream: 4 KiB holds several tokens' events, and a burst takes a few
 * reads (16 KiB held 12 KiB more a stream; bench/README.md, "Memory of open paced streams").
 */
const READ_BYTES = 4 * 1024;

/** A reader of a response body. */
export type BodyReader = Pick<ReadableStreamDefaultReader<Uint8Array>, "read" | "cancel">;

/**
 * Wraps fetch: pins the attempt's signal and reports status, headers and the first body byte.
 * With `detach`, a successful body goes to `detach` (read by our own parser) and the caller gets
 * an empty body in its place.
 */
export function observedFetch(
  base: typeof fetch,
  signal: AbortSignal,
  observed: Observed,
  detach?: (body: BodyReader) => void,
): typeof fetch {
  return async (input, init) => {
    observed.request = {
      url: input instanceof Request ? input.url : String(input),
      method: init?.method ?? (input instanceof Request ? input.method : "GET"),
      headers: new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)),
      body: init?.body,
    };
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (e) {
      if (!signal.aborted) observed.connectionError = e;
      throw e;
    }
    observed.status = response.status;
    observed.headers = response.headers;
    if (!response.ok || response.body === null) return response;
    const source = observedBody(bodyReader(response.body), signal, observed);
    const meta = {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    };
    if (detach) {
      detach(source);
      return new Response("", meta);
    }
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await source.read();
        } catch (e) {
          controller.error(e);
          return;
        }
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return new Response(body, meta);
  };
}

/** A body reader that reports the first byte and a failed read to `observed`. */
function observedBody(source: BodyReader, signal: AbortSignal, observed: Observed): BodyReader {
  return {
    async read() {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await source.read();
      } catch (e) {
        if (!signal.aborted) observed.bodyError ??= e;
        throw e;
      }
      if (!observed.firstByte) {
        observed.firstByte = true;
        observed.onFirstByte();
      }
      return chunk;
    },
    cancel: (reason) => source.cancel(reason),
  };
}

/**
 * Reads a body into one buffer of `READ_BYTES` reused from read to read, handing on a copy of what
 * each read filled (a byte stream: fetch's); any other stream as it is.
 */
function bodyReader(stream: ReadableStream<Uint8Array>): BodyReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    return stream.getReader();
  }
  let buffer = new Uint8Array(READ_BYTES);
  return {
    async read() {
      const read = await byob.read(buffer);
      if (read.value) buffer = new Uint8Array(read.value.buffer);
      if (read.done) return { done: true, value: undefined };
      return { done: false, value: read.value.slice() };
    },
    cancel: (reason) => byob.cancel(reason),
  };
}
