/**
 * Test doubles for the engine: a scripted `ModelClient`, small `Tool`s, and a harness that wires
 * them to a real in-memory SQLite store the way the run service does.
 */
import type { Message, RunRequest } from "../../src/api/schemas.ts";
import { ManifestSchema } from "../../src/config/schema.ts";
import { createEngine, type EngineDeps } from "../../src/engine/mod.ts";
import { ModelConfigError } from "../../src/models/mod.ts";
import type { RunEvent } from "../../src/api/events.ts";
import {
  type ModelClient,
  ModelError,
  type ModelEvent,
  type ModelRequest,
  type ModelStream,
  type ResolvedModel,
} from "../../src/models/types.ts";
import { createLogger } from "../../src/log.ts";
import { openStore } from "../../src/store/mod.ts";
import type { StepCommit, Store } from "../../src/store/types.ts";
import type { Tool, ToolCallContext, ToolOutcome } from "../../src/tools/types.ts";

/** One scripted item of a model stream. */
export type Item = ModelEvent | { wait: number } | { fail: ModelError | Error };

/** One scripted model turn: a stream, or a failure to open one. */
export type Turn = Item[] | { open_error: ModelError };

/** Sleeps `ms`, rejecting at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason ?? new DOMException("aborted", "AbortError"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A model that plays its turns in order and records what it was asked. */
export class ScriptedModel implements ModelClient {
  readonly requests: ModelRequest[] = [];
  readonly models: ResolvedModel[] = [];
  constructor(public turns: Turn[] = [], readonly fallback?: (req: ModelRequest) => Turn) {}

  open(model: ResolvedModel, request: ModelRequest, signal: AbortSignal): Promise<ModelStream> {
    // Snapshot: the engine keeps appending to its conversation.
    this.requests.push(structuredClone(request));
    this.models.push(model);
    const turn = this.turns.shift() ?? this.fallback?.(request);
    if (!turn) return Promise.reject(new Error("the script has no more turns"));
    if (!Array.isArray(turn)) return Promise.reject(turn.open_error);
    async function* events(): AsyncGenerator<ModelEvent> {
      for (const item of turn as Item[]) {
        if ("wait" in item) await sleep(item.wait, signal);
        else if ("fail" in item) throw item.fail;
        else yield item;
      }
    }
    return Promise.resolve({ attempts: 1, establish_ms: 0, events: events() });
  }
}

/** A text answer as a turn, one delta per word. */
export function say(text: string): Item[] {
  return [
    ...(text.match(/\S+\s*/g) ?? []).map((delta) => ({ type: "text-delta" as const, delta })),
    { type: "finish", reason: "stop" },
  ];
}

/** Tool calls as a turn (arguments streamed in two deltas each). */
export function call(...calls: { id: string; name: string; args?: Record<string, unknown> }[]) {
  const items: Item[] = [];
  for (const c of calls) {
    const json = JSON.stringify(c.args ?? {});
    const half = Math.floor(json.length / 2);
    items.push({ type: "tool-call-start", id: c.id, name: c.name });
    items.push({ type: "tool-call-delta", id: c.id, delta: json.slice(0, half) });
    items.push({ type: "tool-call-delta", id: c.id, delta: json.slice(half) });
    items.push({ type: "tool-call", id: c.id, name: c.name, arguments: c.args ?? {} });
  }
  items.push({ type: "finish", reason: "tool-calls" });
  return items;
}

/** A tool made from a function, counting its calls. */
export class FakeTool implements Tool {
  calls: { args: Record<string, unknown>; ctx: ToolCallContext }[] = [];
  constructor(
    readonly name: string,
    readonly fn: (args: Record<string, unknown>, ctx: ToolCallContext) => Promise<ToolOutcome>,
    readonly requires_approval = false,
    readonly description = `the ${name} tool`,
    readonly parameters: Record<string, unknown> = { type: "object", properties: {} },
  ) {}
  call(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutcome> {
    this.calls.push({ args, ctx });
    return this.fn(args, ctx);
  }
}

/** A tool that adds `a` and `b`. */
export const addTool = (): FakeTool =>
  new FakeTool(
    "add",
    (args) => Promise.resolve({ result: Number(args.a) + Number(args.b), is_error: false }),
  );

/** A manifest from a partial agent block and optional capabilities. */
export function manifest(
  agent: Record<string, unknown> = {},
  capability: Record<string, unknown> = {},
) {
  return ManifestSchema.parse({ agent: { name: "test-agent", ...agent }, capability });
}

/** What one run of the harness gave. */
export interface RunOutput {
  run_id: string;
  session_id: string;
  events: RunEvent[];
  kinds: string[];
  finished: Extract<RunEvent, { kind: "run_finished" }>;
}

/** Engine, store and fakes wired together like the run service does. */
export class Harness {
  readonly tenant = "t1";
  private constructor(
    readonly store: Store,
    readonly model: ScriptedModel,
    readonly deps: EngineDeps,
    /** Every JSON line the engine logged, in order. */
    readonly logs: string[],
  ) {}

  static async create(options: {
    turns?: Turn[];
    fallback?: (req: ModelRequest) => Turn;
    tools?: Tool[];
    agent?: Record<string, unknown>;
    capability?: Record<string, unknown>;
    /** Secret values the engine's logger scrubs. */
    secrets?: string[];
  } = {}): Promise<Harness> {
    const store = await openStore({ kind: "sqlite", path: ":memory:" });
    const logs: string[] = [];
    const log = createLogger("debug", {}, (line) => logs.push(line), { secrets: options.secrets });
    const model = new ScriptedModel(options.turns ?? [], options.fallback);
    const deps: EngineDeps = {
      config: { manifest: manifest(options.agent, options.capability), baseDir: "/" },
      store,
      models: model,
      tools: new Map((options.tools ?? []).map((t) => [t.name, t])),
      log,
      resolveModel: (m) => {
        const name = m?.override?.model ?? "fake-1";
        if (name === "unknown") {
          throw new ModelConfigError("unknown_model", "model.override.model", "no such model");
        }
        return {
          provider: "fake",
          model: name,
          inference_params: {},
          retry: { max_attempts: 1, initial_backoff: 0, max_backoff: 0 },
        };
      },
    };
    return new Harness(store, model, deps, logs);
  }

  /**
   * Starts a run the way the run service does (prepare, session, run record, execute) and
   * collects its events; `onEvent` sees each one as it arrives.
   */
  async run(
    request: Partial<RunRequest> & { session_id: string },
    options: { signal?: AbortSignal; onEvent?: (e: RunEvent) => void | Promise<void> } = {},
  ): Promise<RunOutput> {
    const req = { messages: [user("hi")], ...request } as RunRequest;
    const engine = createEngine(this.deps);
    const run_id = req.run_id ?? crypto.randomUUID();
    const ids = { tenant_id: this.tenant, session_id: req.session_id!, run_id };
    const plan = await engine.prepare(ids, req);
    await this.store.createRun(this.tenant, {
      run_id,
      session_id: req.session_id!,
      parent_checkpoint_id: plan.parent_checkpoint_id,
      owner: "test",
      ...plan.begin,
    });
    const events: RunEvent[] = [];
    let last: StepCommit | null = null;
    const signal = options.signal ?? new AbortController().signal;
    for await (const e of engine.execute(plan, ids, signal, { finish: (l) => (last = l) })) {
      events.push(e);
      await options.onEvent?.(e);
    }
    const finished = events[events.length - 1];
    if (finished?.kind !== "run_finished") throw new Error("the last event is not run_finished");
    await this.store.finishRun(run_id, {
      status: finished.status === "running" ? "failed" : finished.status,
      result: finished.result,
      interrupt_payload: finished.interrupt_payload,
      error: finished.error ?? null,
    }, last);
    return {
      run_id,
      session_id: req.session_id!,
      events,
      kinds: events.map((e) => e.kind),
      finished,
    };
  }

  /** The session's conversation as role:text lines, for compact assertions. */
  async transcript(sessionId: string): Promise<string[]> {
    return describe(await this.store.allMessages(this.tenant, sessionId));
  }

  close(): Promise<void> {
    return this.store.close();
  }

  /** Closes the store: `await using h = await Harness.create(...)`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A user message input. */
export function user(text: string) {
  return { role: "user" as const, content: [{ type: "text" as const, value: text }] };
}

/** Messages as compact `role:text` lines (tool calls and data parts rendered as JSON). */
export function describe(messages: Pick<Message, "role" | "content" | "tool_calls">[]): string[] {
  return messages.map((m) => {
    const body = m.content.map((p) =>
      p.type === "text" ? p.value : JSON.stringify("value" in p ? p.value : p)
    ).join(
      "",
    );
    const calls = m.tool_calls?.length
      ? ` calls=${m.tool_calls.map((c) => `${c.name}#${c.id}`).join(",")}`
      : "";
    return `${m.role}:${body}${calls}`;
  });
}

export { ModelError };

/** The events of `kind` among `events`, typed. */
export const only = <K extends RunEvent["kind"]>(events: RunEvent[], kind: K) =>
  events.filter((e): e is Extract<RunEvent, { kind: K }> => e.kind === kind);

/** Two client tools a request can define. */
export const clientTools = [
  { name: "get_location", description: "where the user is", parameters: { type: "object" } },
  { name: "confirm", description: "ask the user", parameters: { type: "object" } },
];
