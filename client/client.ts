/**
 * The official TypeScript client of agentd's native API (`/v1`, docs/api.md): sessions,
 * messages, checkpoints and runs as typed calls, run streams as async iterables that resume by
 * cursor after a dropped connection (run_stream.ts), error answers as `AgentdError`s. It uses
 * nothing but `fetch`; see docs/client.md.
 */
import { type ClientOptions, Http, segment } from "./http.ts";
import { RunStream, type RunStreamOptions } from "./run_stream.ts";
import type {
  Checkpoint,
  ListQuery,
  Message,
  MessageInput,
  Page,
  Run,
  RunListQuery,
  RunRequest,
  RunStarted,
  RunStep,
  Session,
  SessionCreate,
} from "./types.ts";

/** A client of one agentd server. */
export class AgentdClient {
  /** Sessions: the durable conversation boundary. */
  readonly sessions: Sessions;
  /** A session's conversation. */
  readonly messages: Messages;
  /** A session's saved states. */
  readonly checkpoints: Checkpoints;
  /** Runs: start, stream, re-attach, list, read, cancel. */
  readonly runs: Runs;

  /** A client of the server at `options.baseUrl`. */
  constructor(options: ClientOptions) {
    const http = new Http(options);
    this.sessions = new Sessions(http);
    this.messages = new Messages(http);
    this.checkpoints = new Checkpoints(http);
    this.runs = new Runs(http);
  }
}

/** `/v1/sessions`. */
export class Sessions {
  readonly #http: Http;

  /** Calls made through `http` (a client makes its own; see `AgentdClient`). */
  constructor(http: Http) {
    this.#http = http;
  }

  /** Creates a session (`session_id` generated when absent); 409001 when the id is taken. */
  create(body: SessionCreate = {}): Promise<Session> {
    return this.#http.json("/v1/sessions", { method: "POST", json: body });
  }

  /** A page of the tenant's sessions, oldest first. */
  list(query: ListQuery = {}): Promise<Page<Session>> {
    return this.#http.json("/v1/sessions", { query: { ...query } });
  }

  /** A session; 404001 when the tenant has none such. */
  get(sessionId: string): Promise<Session> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}`);
  }

  /** Deletes a session with its messages, checkpoints and runs; 409003 while a run runs. */
  delete(sessionId: string): Promise<void> {
    return this.#http.empty(`/v1/sessions/${segment(sessionId)}`, { method: "DELETE" });
  }
}

/** `/v1/sessions/{session_id}/messages`. */
export class Messages {
  readonly #http: Http;

  /** Calls made through `http` (a client makes its own; see `AgentdClient`). */
  constructor(http: Http) {
    this.#http = http;
  }

  /** A page of a session's messages, in conversation order. */
  list(sessionId: string, query: ListQuery = {}): Promise<Page<Message>> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}/messages`, { query: { ...query } });
  }

  /** One message of a session. */
  get(sessionId: string, messageId: string): Promise<Message> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}/messages/${segment(messageId)}`);
  }

  /** Appends a message to a session's conversation (what the next run sees). */
  create(sessionId: string, message: MessageInput): Promise<Message> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}/messages`, {
      method: "POST",
      json: message,
    });
  }

  /** Deletes a message of a session. */
  delete(sessionId: string, messageId: string): Promise<void> {
    return this.#http.empty(`/v1/sessions/${segment(sessionId)}/messages/${segment(messageId)}`, {
      method: "DELETE",
    });
  }
}

/** `/v1/sessions/{session_id}/checkpoints`. */
export class Checkpoints {
  readonly #http: Http;

  /** Calls made through `http` (a client makes its own; see `AgentdClient`). */
  constructor(http: Http) {
    this.#http = http;
  }

  /** A page of a session's checkpoints, oldest first. */
  list(sessionId: string, query: ListQuery = {}): Promise<Page<Checkpoint>> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}/checkpoints`, {
      query: { ...query },
    });
  }

  /** One checkpoint of a session; 404004 when it has none such. */
  get(sessionId: string, checkpointId: string): Promise<Checkpoint> {
    return this.#http.json(
      `/v1/sessions/${segment(sessionId)}/checkpoints/${segment(checkpointId)}`,
    );
  }
}

/** `/v1/runs` and a session's runs. */
export class Runs {
  readonly #http: Http;

  /** Calls made through `http` (a client makes its own; see `AgentdClient`). */
  constructor(http: Http) {
    this.#http = http;
  }

  /**
   * Starts a run and streams its events, resuming by cursor after a dropped connection. The run
   * gets an id here when the request has none (so even a start whose answer was lost can be
   * resumed), and `on_disconnect: "continue"` unless the request says otherwise: a dropped
   * connection must not cancel the run it is about to resume. `cancel()` cancels it.
   */
  stream(request: RunRequest, options: RunStreamOptions = {}): RunStream {
    const runId = request.run_id ?? crypto.randomUUID();
    const body = { ...request, run_id: runId, on_disconnect: request.on_disconnect ?? "continue" };
    return new RunStream(this.#http, runId, { kind: "start", body }, options);
  }

  /**
   * The events of a run already started: after `after` (a frame id: `"0"` from the first
   * event), or, without it, those produced from now on (the run must be running, else 409004).
   */
  events(runId: string, options: RunStreamOptions & { after?: string } = {}): RunStream {
    const { after, ...rest } = options;
    return new RunStream(this.#http, runId, { kind: "attach", after }, rest);
  }

  /** Starts a run in the background (`POST /v1/runs/start`). */
  start(request: RunRequest): Promise<RunStarted> {
    return this.#http.json("/v1/runs/start", { method: "POST", json: request });
  }

  /** A run's record; 404002 when the tenant has none such. */
  get(runId: string): Promise<Run> {
    return this.#http.json(`/v1/runs/${segment(runId)}`);
  }

  /**
   * What a run did step by step (`GET /v1/runs/{id}/steps`): timings, tool calls and, when the
   * server records them, the model requests; 404002 when the tenant has no such run.
   */
  async steps(runId: string): Promise<RunStep[]> {
    const { data } = await this.#http.json<{ data: RunStep[] }>(
      `/v1/runs/${segment(runId)}/steps`,
    );
    return data;
  }

  /** A page of a session's runs, with filters. */
  list(sessionId: string, query: RunListQuery = {}): Promise<Page<Run>> {
    return this.#http.json(`/v1/sessions/${segment(sessionId)}/runs`, { query: { ...query } });
  }

  /** Cancels a run (nothing happens to a run that already ended). */
  cancel(runId: string): Promise<void> {
    return this.#http.empty(`/v1/runs/${segment(runId)}/cancel`, { method: "PUT" });
  }
}
