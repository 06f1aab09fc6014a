/**
 * A run's event stream as an async iterable of typed run events that survives dropped
 * connections: whenever the connection ends before `run_finished` (a network error, a proxy's
 * timeout, a server that dropped a slow reader), it reconnects to `GET /v1/runs/{id}/events` with
 * the id of the last frame it read (`Last-Event-ID`), so every event arrives once and in order.
 */
import { AgentdError, ERROR_CODES } from "./errors.ts";
import { type Http, segment } from "./http.ts";
import { readFrames } from "./sse.ts";
import type { RunEvent, RunEventOf } from "./types.ts";

/** How a stream reconnects. */
export interface ReconnectOptions {
  /** Attempts in a row before the stream gives up and throws (default 8; 0: never reconnect). */
  attempts?: number;
  /** Milliseconds before the first attempt, doubled each further one (default 250). */
  delayMs?: number;
  /** Most milliseconds between two attempts (default 5000). */
  maxDelayMs?: number;
}

/** Options of a run stream. */
export interface RunStreamOptions {
  /** Stops reading: the iteration throws the signal's reason (the run goes on; see `cancel`). */
  signal?: AbortSignal;
  /** How to reconnect after a dropped connection. */
  reconnect?: ReconnectOptions;
}

/** How a stream opens its first connection. */
export type Opening =
  /** `POST /v1/runs` with this body; a 409002 (the run exists: our own earlier try) attaches. */
  | { kind: "start"; body: Record<string, unknown> }
  /** `GET /v1/runs/{id}/events`, after `after` (a frame id) or, without it, live only. */
  | { kind: "attach"; after?: string };

/** A run's events, typed; iterate it once. */
export class RunStream implements AsyncIterable<RunEvent> {
  /** The run's id. */
  readonly runId: string;
  #sessionId: string | undefined;
  #lastEventId: string | undefined;
  #finished: RunEventOf<"run_finished"> | undefined;
  #reconnects = 0;
  /** How many times the stream sent its `POST /v1/runs`. */
  #starts = 0;
  readonly #http: Http;
  readonly #opening: Opening;
  readonly #options: RunStreamOptions;
  #iterated = false;

  /** The stream of `runId`, opened as `opening` says (see `Runs.stream` and `Runs.events`). */
  constructor(http: Http, runId: string, opening: Opening, options: RunStreamOptions = {}) {
    this.#http = http;
    this.runId = runId;
    this.#opening = opening;
    this.#options = options;
    if (opening.kind === "attach") this.#lastEventId = opening.after;
  }

  /** The session the run runs in, once the server said it (`run_started`, a response header). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** The id of the last frame read: the cursor this stream resumes from. */
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }

  /** How many times the stream reconnected. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** The run's `run_finished` event, once read. */
  get finished(): RunEventOf<"run_finished"> | undefined {
    return this.#finished;
  }

  /** Cancels the run (`PUT /v1/runs/{id}/cancel`); the stream then ends with `run_finished`. */
  async cancel(): Promise<void> {
    await this.#http.empty(`/v1/runs/${segment(this.runId)}/cancel`, { method: "PUT" });
  }

  /** Reads the stream to its end and returns the run's `run_finished` event. */
  async done(): Promise<RunEventOf<"run_finished">> {
    if (!this.#iterated) { for await (const _ of this) { /* read to the end */ } }
    if (!this.#finished) throw new Error(`the stream of run ${this.runId} ended without its end`);
    return this.#finished;
  }

  /** The events, in order, to `run_finished`. */
  async *[Symbol.asyncIterator](): AsyncGenerator<RunEvent> {
    if (this.#iterated) throw new Error("a RunStream is iterated once");
    this.#iterated = true;
    const reconnect = this.#options.reconnect ?? {};
    const attempts = reconnect.attempts ?? 8;
    let failures = 0;
    let starting = this.#opening.kind === "start";
    for (;;) {
      const controller = new AbortController();
      const signal = this.#options.signal
        ? AbortSignal.any([this.#options.signal, controller.signal])
        : controller.signal;
      let body: ReadableStream<Uint8Array> | null = null;
      try {
        const res = await this.#connect(starting, signal);
        starting = false;
        if (res === null) return; // nothing after the cursor: the run ended and we hold it all
        this.#sessionId ??= res.headers.get("x-session-id") ?? undefined;
        body = res.body;
        if (!body) throw new TypeError("the response has no body");
        for await (const frame of readFrames(body)) {
          const event = JSON.parse(frame.data) as RunEvent;
          if (frame.id !== undefined) this.#lastEventId = frame.id;
          failures = 0;
          if (event.kind === "run_started") this.#sessionId = event.session_id;
          if (event.kind === "run_finished") this.#finished = event;
          yield event;
          if (event.kind === "run_finished") return;
        }
        // Ended without run_finished (a dropped slow reader, a lost transport): resume, unless
        // connection after connection ends that way with nothing new.
        if (++failures > attempts) {
          throw new Error(`the stream of run ${this.runId} keeps ending before the run does`);
        }
      } catch (err) {
        this.#options.signal?.throwIfAborted();
        if (err instanceof AgentdError) {
          // A retried start whose run exists is our own earlier try that reached the server.
          if (!(err.code === ERROR_CODES.runExists && this.#starts > 1)) throw err;
          starting = false;
        } else if (++failures > attempts) {
          throw err;
        }
      } finally {
        controller.abort();
      }
      this.#reconnects++;
      const delay = Math.min(
        (reconnect.delayMs ?? 250) * 2 ** Math.max(0, failures - 1),
        reconnect.maxDelayMs ?? 5_000,
      );
      await sleep(delay, this.#options.signal);
    }
  }

  /** One connection: the start, or a (re-)attach from the cursor; null for a 204. */
  async #connect(starting: boolean, signal: AbortSignal): Promise<Response | null> {
    if (starting && this.#opening.kind === "start") {
      this.#starts++;
      return await this.#http.request("/v1/runs", {
        method: "POST",
        json: this.#opening.body,
        headers: { accept: "text/event-stream" },
        signal,
      });
    }
    // A start that dropped before its first frame resumes from the beginning (`after=0`).
    const after = this.#lastEventId ?? (this.#opening.kind === "start" ? "0" : undefined);
    const res = await this.#http.request(`/v1/runs/${segment(this.runId)}/events`, {
      headers: { accept: "text/event-stream", ...(after ? { "last-event-id": after } : {}) },
      signal,
    });
    if (res.status === 204) {
      await res.body?.cancel();
      return null;
    }
    return res;
  }
}

/** Waits `ms`, or throws the signal's reason when it aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
